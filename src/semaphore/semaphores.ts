/**
 * `acquirePermit` and `acquirePermits`: permits of a semaphore (permit-keys.ts)
 * taken with the client's own acquisitions, so that each permit is then
 * held, heartbeated, lost and released as any lock is.
 *
 * A call first tries one permit picked at random with a single conditional
 * write (a single permit only: a group reads before it writes). Then it
 * waits in rounds that only read: each reads every permit and the one past
 * the last (which no client that agrees on the number may hold) in one
 * BatchGetItem (permit-reads.ts), judges
 * them (permit-round.ts), and once enough are free, takes free ones picked
 * at random: one as `acquireLock` takes a lock without waiting (and, when
 * another client took it first, the next free one the round saw, before
 * any new read), several in one transaction as `acquireLocks` does, which
 * never holds some while waiting for others. A permit whose RVN stood still for its whole lease on
 * this process's clock is recovered first by a delete conditioned on that
 * RVN and its owner: a takeover and a release, as `collectAbandoned` does.
 */
import type { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import type { Acquirer } from '../acquire/acquirer.js';
import { StaleWatch } from '../acquire/stale-watch.js';
import type { MonotonicClock } from '../base/clock.js';
import {
  DynamoDBTimeoutError,
  DynamoDBTooSlowError,
  DynamoDBUnavailableError,
  LockCurrentlyUnavailableError,
  LockNotGrantedError,
} from '../base/errors.js';
import { describeLockKey, lockId, type LockKey } from '../base/lock-key.js';
import type { Logger } from '../base/logger.js';
import type { LockObservation } from '../dynamodb/read-lock.js';
import { isTransient } from '../dynamodb/sdk-errors.js';
import { deleteAbandoned } from '../gc/delete-abandoned.js';
import type { HeldLock } from '../hold/held-lock.js';
import type { HeldLocks } from '../heartbeat/held-locks.js';
import { abortableSleep } from '../primitives/abortable-sleep.js';
import { runWithinLifetime } from '../primitives/lifetime-call.js';
import type { LockTable } from '../protocol/index.js';
import { checkSemaphoreName, PERMITS_ATTRIBUTE, permitKeys } from './permit-keys.js';
import type { ResolvedSettings } from '../settings/options.js';
import { resolvePermitOptions, type AcquirePermitsOptions, type ResolvedPermitOptions } from './permit-options.js';
import { PermitReads } from './permit-reads.js';
import { judgeRound, type RoundView } from './permit-round.js';

export type { AcquirePermitOptions, AcquirePermitsOptions } from './permit-options.js';

export interface SemaphoresOptions {
  readonly acquirer: Acquirer;
  readonly dynamoDB: Pick<DynamoDBClient, 'send'>;
  readonly table: LockTable;
  /** Its lease bounds a recovering delete, and measures the wait before any holder was seen; a fencing client's transaction takes half as many locks. */
  readonly settings: Pick<ResolvedSettings, 'leaseDuration' | 'fencingTableName'>;
  readonly clock: MonotonicClock;
  readonly logger: Logger | undefined;
  /** The locks this client holds: its own permits count as taken and are never recovered. */
  readonly holding: HeldLocks;
  /** Aborts when the client closes. */
  readonly lifetime: AbortSignal;
}

export class Semaphores {
  readonly #options: SemaphoresOptions;
  /** Shared by every acquisition: a refused BatchGetItem is tried once per client. */
  readonly #reads: PermitReads;

  constructor(options: SemaphoresOptions) {
    this.#options = options;
    this.#reads = new PermitReads(options.acquirer, options.logger);
  }

  /** Takes `options.count` permits of the semaphore `name`, all or none. */
  acquire(name: string, options: AcquirePermitsOptions): Promise<HeldLock[]> {
    checkSemaphoreName(name);
    const resolved = resolvePermitOptions(options, this.#options.settings.fencingTableName !== undefined);
    return runWithinLifetime(this.#options.lifetime, resolved.signal, (signal) =>
      new PermitAcquisition(this.#options, this.#reads, name, resolved, signal).run(),
    );
  }
}

class PermitAcquisition {
  readonly #ctx: SemaphoresOptions;
  readonly #reads: PermitReads;
  readonly #name: string;
  readonly #options: ResolvedPermitOptions;
  /** Aborts when the caller's signal does or the client closes. */
  readonly #signal: AbortSignal;
  /** Permits 1 to N, then the one past the last. */
  readonly #keys: readonly LockKey[];
  readonly #watches: readonly StaleWatch[];
  readonly #startedAt: number;
  #longestLease = 0;
  /** Takes lost in a row to another client's write; from the second on, the next round waits a refresh period. */
  #racesInARow = 0;
  /** Why the newest attempt did not take the permits, thrown once the wait is over. */
  #refusal: LockNotGrantedError | LockCurrentlyUnavailableError | undefined;

  constructor(ctx: SemaphoresOptions, reads: PermitReads, name: string, options: ResolvedPermitOptions, signal: AbortSignal) {
    this.#ctx = ctx;
    this.#reads = reads;
    this.#name = name;
    this.#options = options;
    this.#signal = signal;
    this.#keys = permitKeys(name, options.permits + 1, options.sortKey);
    this.#watches = Array.from({ length: options.permits }, () => new StaleWatch());
    this.#startedAt = ctx.clock.now();
  }

  async run(): Promise<HeldLock[]> {
    const { count, permits, refreshPeriod, shouldSkipBlockingWait } = this.#options;
    if (count === 1) {
      const won = await this.#take([Math.floor(Math.random() * permits)]);
      if (won !== undefined) return won;
    }
    for (;;) {
      this.#signal.throwIfAborted();
      const view = await this.#round();
      if (view !== undefined) {
        const candidates = [...view.free, ...(await this.#recover(view, count - view.free.length))];
        if (candidates.length >= count) {
          const won = await this.#takeAnyOf(shuffled(candidates));
          if (won !== undefined) return won;
          if (this.#racesInARow++ === 0) continue; // another client wrote first: read again at once, once
        } else {
          this.#racesInARow = 0;
        }
        if (shouldSkipBlockingWait) throw new LockCurrentlyUnavailableError(this.#keys[0] as LockKey, view.holder ?? this.#refusal?.holder);
      }
      const now = this.#ctx.clock.now();
      const endsAt = this.#startedAt + (this.#longestLease || this.#ctx.settings.leaseDuration) + this.#options.additionalTimeToWaitForLock;
      if (now >= endsAt) throw this.#refusal ?? this.#notGranted();
      const nextStaleAt = view?.nextStaleAt ?? Infinity;
      await abortableSleep(Math.min(refreshPeriod, Math.max(0, nextStaleAt - now), endsAt - now), this.#signal);
    }
  }

  /** Reads every permit and the one past the last; `undefined` when DynamoDB gave no usable answer (tried again next round). */
  async #round(): Promise<RoundView | undefined> {
    let seen: (LockObservation | undefined)[];
    try {
      seen = await this.#reads.read(this.#keys, this.#signal);
    } catch (error) {
      this.#signal.throwIfAborted();
      if (!(isTransient(error) || error instanceof DynamoDBTimeoutError)) throw error;
      this.#refusal = new DynamoDBUnavailableError(this.#keys[0] as LockKey, error, this.#refusal?.holder);
      return undefined;
    }
    const { holding, clock } = this.#ctx;
    const heldHere = (index: number): boolean => holding.get(lockId(this.#keys[index] as LockKey))?.isHeld() === true;
    const view = judgeRound({ permits: this.#options.permits, keys: this.#keys, seen, watches: this.#watches, heldHere, now: clock.now() });
    this.#longestLease = Math.max(this.#longestLease, view.longestLease);
    if (view.holder !== undefined) this.#refusal = this.#notGranted(view);
    return view;
  }

  /**
   * Deletes up to `wanted` permits whose holder stopped, each conditioned on
   * the RVN that stood still and its owner; returns those that may now be
   * free (deleted, or of unknown outcome: the take that follows decides).
   */
  async #recover(view: RoundView, wanted: number): Promise<number[]> {
    if (wanted <= 0) return [];
    const { dynamoDB, table, settings, logger } = this.#ctx;
    const recovered = await Promise.all(
      view.stale.slice(0, wanted).map(async ({ index, observation }) => {
        const deletion = { dynamoDB, table, boundMs: settings.leaseDuration, signal: this.#signal };
        const { outcome, error } = await deleteAbandoned(deletion, observation.record);
        this.#signal.throwIfAborted();
        if (outcome === 'deleted') return index;
        logger?.debug({ err: error, key: describeLockKey(observation.record), outcome }, 'semaphore: recovering a stopped permit failed');
        return outcome === 'taken' ? undefined : index;
      }),
    );
    return recovered.filter((index) => index !== undefined);
  }

  /**
   * Takes `count` of the permits at `candidates`, in that order: one permit
   * at a time, the next candidate as soon as one was taken first (a write
   * refused costs less than a round of reads); a group, with the first
   * `count` of them, once.
   */
  async #takeAnyOf(candidates: readonly number[]): Promise<HeldLock[] | undefined> {
    const { count } = this.#options;
    if (count > 1) return this.#take(candidates.slice(0, count));
    for (const index of candidates) {
      const won = await this.#take([index]);
      if (won !== undefined) return won;
    }
    return undefined;
  }

  /** Takes the permits at `indices` without waiting for any holder; `undefined` when one was taken first. */
  async #take(indices: readonly number[]): Promise<HeldLock[] | undefined> {
    const { acquirer } = this.#ctx;
    const { data, deleteLockOnRelease, refreshPeriod, leaseDuration, permits } = this.#options;
    const additionalAttributes = { ...this.#options.additionalAttributes, [PERMITS_ATTRIBUTE]: permits };
    const lockOptions = { data, deleteLockOnRelease, refreshPeriod, leaseDuration, additionalAttributes };
    const keys = indices.map((index) => this.#keys[index] as LockKey);
    const signal = this.#signal;
    try {
      if (keys.length === 1) {
        const options = { ...lockOptions, additionalTimeToWaitForLock: refreshPeriod, shouldSkipBlockingWait: true, signal };
        return [await acquirer.acquire(keys[0] as LockKey, options)];
      }
      // A group that finds a permit taken since the round waits for it, up to its holder's lease: never cut off with a write in flight.
      return await acquirer.acquireGroup(keys, { ...lockOptions, additionalTimeToWaitForLock: 0, signal });
    } catch (error) {
      signal.throwIfAborted();
      if (error instanceof DynamoDBTooSlowError) throw error;
      if (error instanceof LockNotGrantedError || error instanceof LockCurrentlyUnavailableError) {
        this.#refusal = error;
        return undefined;
      }
      throw error;
    }
  }

  #notGranted(view?: RoundView): LockNotGrantedError {
    const { permits, count } = this.#options;
    const waited = Math.round(this.#ctx.clock.now() - this.#startedAt);
    const message = `semaphore ${JSON.stringify(this.#name)}: fewer than ${count} of its ${permits} permits were free after ${waited} ms`;
    return new LockNotGrantedError(message, this.#keys[0] as LockKey, view?.holder ?? this.#refusal?.holder);
  }
}

/** A copy of `items` in random order: waiters that see the same free permits mostly try different ones. */
function shuffled<T>(items: readonly T[]): T[] {
  const copy = [...items];
  for (let i = copy.length - 1; i > 0; i--) {
    const j = Math.floor(Math.random() * (i + 1));
    [copy[i], copy[j]] = [copy[j] as T, copy[i] as T];
  }
  return copy;
}
