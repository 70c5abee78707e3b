/**
 * Leader election on one lock key: candidates campaign by waiting for the
 * lock without a deadline, the winner leads while its heartbeats keep the
 * lock, and anyone can read or follow who leads. The election is nothing but
 * the lock, so Java clients contending on the same key take part by the same
 * rules.
 */
import { ELECTION_DEFAULTS, WITH_LOCK_DEFAULTS } from '../settings/defaults.js';
import { toBytes } from '../primitives/bytes.js';
import { deadline } from '../primitives/deadline.js';
import { InvalidArgumentError } from '../base/errors.js';
import { LockClient } from '../lock-client.js';
import type { LockKeyOptions } from '../lock-client-options.js';
import { checkFunction } from '../settings/argument-checks.js';
import { checkDuration, checkRefreshPeriod } from '../settings/options.js';
import { AlreadyCampaigningError } from './already-campaigning-error.js';
import { leaderOf, sameLeader, type Leader } from './leader.js';
import { Leadership } from './leadership.js';
import type { LockSnapshot } from '../lock.js';
import { watchLock } from './watch-lock.js';

export interface LeaderElectionOptions extends LockKeyOptions {
  /** What the leader stores with the lock for observers, e.g. `JSON.stringify({ address })`. @default none */
  readonly data?: Uint8Array | string;
  /** Lease of leadership in milliseconds; a dead leader is replaced about one lease after its last heartbeat. @default the client's `leaseDuration` */
  readonly leaseDuration?: number;
  /**
   * Milliseconds between a waiting candidate's reads of the lock. A
   * resignation is noticed at the next read, so this bounds how long a
   * hand-over takes. At least 10. @default 500
   */
  readonly refreshPeriod?: number;
  /** Milliseconds between the reads of {@link LeaderElection.observe}, unless the call passes its own. @default 1000 */
  readonly pollInterval?: number;
}

export interface CampaignOptions {
  /** Stops waiting; the campaign then rejects with `signal.reason`. */
  readonly signal?: AbortSignal;
}

export interface LeadOptions {
  /** Stops campaigning, and aborts the routine's signal while it leads. */
  readonly signal?: AbortSignal;
  /** Campaign again after leadership was lost (not after the routine ended while leading). @default true */
  readonly recampaign?: boolean;
}

export interface ObserveOptions {
  /** Milliseconds between two reads, as in `watchLock`. @default the election's `pollInterval` */
  readonly pollInterval?: number;
  /** Ends the iteration (without an error) when it aborts. */
  readonly signal?: AbortSignal;
}

export class LeaderElection {
  readonly client: LockClient;
  readonly partitionKey: string;
  readonly sortKey: string | undefined;
  readonly #data: Uint8Array | undefined;
  readonly #leaseDuration: number | undefined;
  readonly #refreshPeriod: number;
  readonly #pollInterval: number;
  #campaigning = false;
  #leadership: Leadership | undefined;

  constructor(client: LockClient, partitionKey: string, options: LeaderElectionOptions = {}) {
    if (!(client instanceof LockClient)) {
      throw new InvalidArgumentError('INVALID_OPTION', 'LeaderElection needs a LockClient as its first argument');
    }
    if (typeof partitionKey !== 'string' || partitionKey.length === 0) {
      throw new InvalidArgumentError('EMPTY_KEY', `The election key must be a non-empty string, got ${JSON.stringify(partitionKey)}`);
    }
    this.client = client;
    this.partitionKey = partitionKey;
    this.sortKey = options.sortKey;
    this.#data = toBytes(options.data);
    this.#leaseDuration = options.leaseDuration === undefined ? undefined : checkDuration('leaseDuration', options.leaseDuration, { min: 1 });
    this.#refreshPeriod = checkRefreshPeriod(options.refreshPeriod ?? ELECTION_DEFAULTS.refreshPeriod);
    this.#pollInterval = checkDuration('pollInterval', options.pollInterval ?? ELECTION_DEFAULTS.pollInterval, { min: 1 });
  }

  /**
   * Waits, without a deadline, until this candidate leads. A leader that
   * resigns is followed at the next read (`refreshPeriod`); one that died is
   * followed once its RVN stood still for its lease.
   *
   * @throws AlreadyCampaigningError while this election (or this client, on this key) already campaigns or leads.
   */
  async campaign(options: CampaignOptions = {}): Promise<Leadership> {
    if (this.#campaigning) throw new AlreadyCampaigningError(this, 'it is already campaigning');
    if (this.#leadership?.signal.aborted === false) throw new AlreadyCampaigningError(this, 'it already leads');
    if (this.client.hasLock(this.partitionKey, { sortKey: this.sortKey })) {
      throw new AlreadyCampaigningError(this, `its client (${this.client.ownerName}) already holds the election's lock`);
    }
    this.#campaigning = true;
    try {
      const lock = await this.client.acquireLock(this.partitionKey, {
        sortKey: this.sortKey,
        data: this.#data,
        leaseDuration: this.#leaseDuration,
        refreshPeriod: this.#refreshPeriod,
        additionalTimeToWaitForLock: Infinity,
        // Resigning deletes the item, which a waiting Java client also reads as free.
        deleteLockOnRelease: true,
        signal: options.signal,
      });
      this.#leadership = new Leadership(lock);
      return this.#leadership;
    } finally {
      this.#campaigning = false;
    }
  }

  /**
   * Campaigns, runs `routine(signal, leadership)` while leading, and resigns
   * when it ends. `signal` aborts the moment leadership is in doubt (or
   * `options.signal` aborts). When leadership was lost during the routine,
   * campaigns again (unless `recampaign` is false); when the routine ended
   * while still leading, or after the leadership was resigned, resolves
   * with its result (or rejects with its error).
   * The resignation is one attempt of at most 5 s; if it fails, leadership
   * lapses one lease after the last heartbeat.
   */
  async lead<T>(routine: (signal: AbortSignal, leadership: Leadership) => Promise<T> | T, options: LeadOptions = {}): Promise<T> {
    checkFunction('lead: routine', routine);
    const recampaign = options.recampaign ?? ELECTION_DEFAULTS.recampaign;
    for (;;) {
      const leadership = await this.campaign({ signal: options.signal });
      const signal = options.signal === undefined ? leadership.signal : AbortSignal.any([leadership.signal, options.signal]);
      const term = watchTerm(leadership);
      let outcome: { readonly value: T } | { readonly error: unknown };
      try {
        outcome = { value: await routine(signal, leadership) };
      } catch (error) {
        outcome = { error };
      }
      // Read before resigning, which ends the term too.
      const lost = term.end() === 'lost';
      await stepDown(leadership);
      if (lost && recampaign && !options.signal?.aborted) continue;
      if ('error' in outcome) throw outcome.error;
      return outcome.value;
    }
  }

  /**
   * The current leader, read from the table (no campaign): the holder of
   * the lock, or `undefined` when nobody holds it. A leader that died stays
   * the holder until a candidate takes over.
   */
  async leader(options: { readonly signal?: AbortSignal } = {}): Promise<Leader | undefined> {
    const lock = await this.client.getLock(this.partitionKey, { sortKey: this.sortKey, signal: options.signal });
    return lock === undefined ? undefined : leaderOf(lock);
  }

  /**
   * Yields the current leader (`undefined`: none), then each change of
   * leader or of its data, read every `pollInterval`, until `signal` aborts.
   * Heartbeats are not changes. A change undone between two reads is not
   * seen.
   */
  observe(options: ObserveOptions = {}): AsyncIterable<Leader | undefined> {
    return leaderChanges(
      watchLock(this.client, this.partitionKey, {
        sortKey: this.sortKey,
        pollInterval: options.pollInterval ?? this.#pollInterval,
        signal: options.signal,
      }),
    );
  }
}

async function* leaderChanges(snapshots: AsyncIterable<LockSnapshot | undefined>): AsyncGenerator<Leader | undefined, void, undefined> {
  let first = true;
  let last: Leader | undefined;
  for await (const snapshot of snapshots) {
    const leader = snapshot === undefined ? undefined : leaderOf(snapshot);
    if (first || !sameLeader(last, leader)) yield leader;
    first = false;
    last = leader;
  }
}

/**
 * How a term ends: `lost`, or `resigned` when a release by this client (the
 * routine's `resign()`, anyone's) ended it, or `running` still. Told apart
 * as the signal aborts: a release of ours begins with the lock `releasing`,
 * a loss leaves it `lost`, and the error's kind (`released`) is the same
 * when someone else marked the item released.
 */
function watchTerm(leadership: Leadership): { end(): 'running' | 'lost' | 'resigned' } {
  const { signal } = leadership;
  let ended: 'running' | 'lost' | 'resigned' = signal.aborted ? 'lost' : 'running';
  const onAbort = (): void => {
    ended = leadership.lock.state === 'releasing' ? 'resigned' : 'lost';
  };
  signal.addEventListener('abort', onAbort, { once: true });
  return {
    end: () => {
      signal.removeEventListener('abort', onAbort);
      return ended;
    },
  };
}

async function stepDown(leadership: Leadership): Promise<void> {
  const bound = deadline(WITH_LOCK_DEFAULTS.releaseTimeout);
  try {
    // Best effort: nobody will resign again, so a resignation that fails lets leadership lapse after its lease.
    await leadership.lock.release({ deleteLock: true, bestEffort: true, signal: bound.signal });
  } catch {
    // The client was closed meanwhile: closing released or gave up its locks.
  } finally {
    bound.clear();
  }
}
