/**
 * One `acquireLocks` call: several locks taken all at once or not at all,
 * in one `TransactWriteItems` per attempt (protocol/group-acquisition.ts).
 *
 * It never holds one lock while it waits for another. Each round reads every
 * key consistently, through the gate; while any of them is held by someone
 * else and not yet stale, it sends nothing and reads again a refresh period
 * later (or at the instant the last such lock turns stale, if sooner).
 * Staleness is Java's, judged per key (stale-watch.ts): the RVN unchanged
 * for its whole lease on this process's monotonic clock. Once every key is
 * free or stale, one transaction writes each lock with the condition a
 * single acquisition would use on what was read. A cancellation for races
 * (someone wrote one of the keys since it was read) is a lost race: read
 * again, within the same deadline as `acquireLock`'s.
 *
 * A transaction whose outcome is unknown is remembered with its RVNs
 * (group-attempts.ts) and judged by every later read of the keys.
 */
import type { LockObservation } from '../dynamodb/read-lock.js';
import type { ReplicationCheck } from '../dynamodb/table-replication.js';
import type { Logger } from '../base/logger.js';
import { DynamoDBTooSlowError, DynamoDBUnavailableError, LockNotGrantedError, type LockHolder } from '../base/errors.js';
import { lockId, type LockKey } from '../base/lock-key.js';
import { Departure } from '../dynamodb/departure.js';
import { classifyFailedWrite } from '../dynamodb/write-outcome.js';
import { abortableSleep } from '../primitives/abortable-sleep.js';
import { encodeAdditionalAttributes, type GroupMember, type LockItem } from '../protocol/index.js';
import { holderOf } from '../protocol/lock-holder.js';
import { AcquireDeadline } from './acquire-deadline.js';
import type { AcquisitionGate, GateLane } from './acquisition-gate.js';
import type { ClockBound } from './clock-bound.js';
import { AcquisitionWrites, type AcquisitionWritesContext } from './acquisition-writes.js';
import { decide, heldByAnother, type Decision } from './acquisition-rule.js';
import { kindOfFailure } from './failure-kind.js';
import { acquisitionsOf, readAttempt, type GroupAttempt } from './group-attempts.js';
import type { Resolved } from './acquire-options.js';
import type { AcquireLocksOptions } from './group-options.js';
import { admittedForCall } from './request-bound.js';
import { StaleWatch } from './stale-watch.js';
import { LateTakeover } from './late-takeover.js';
import { handOver, type LateReplyContext } from './late-reply.js';
import { turnRequestOf, type TurnPlan, type Turns } from './turns.js';
import type { Acquisition } from './steps.js';

/**
 * What one `acquireLocks` call works with, each part by name: its writes'
 * (acquisition-writes.ts), its late reply's (late-reply.ts), and the
 * client's parts below, shared among the client's calls (acquirer.ts).
 */
export interface GroupAcquireParts extends AcquisitionWritesContext, LateReplyContext {
  readonly logger: Logger | undefined;
  /** Maps errors about the table itself to typed errors. */
  readonly explain: (error: unknown) => Promise<unknown>;
  /** Holds acquisition requests back while the client's heartbeats are behind. */
  readonly gate: AcquisitionGate;
  /** The lock table's replication, checked before the client's first lock write; absent when the user opted out. */
  readonly replication: ReplicationCheck | undefined;
  /** This client's turns on the locks it releases and asks for again at once. */
  readonly turns: Turns;
  /** The bounded-clock takeover (client option `clockBound`); absent when off. */
  readonly clockBound?: ClockBound | undefined;
}

/** What one round decided on the keys as read. */
type Round =
  /** A transaction of unknown outcome shows on every key: the group is ours. */
  | { readonly kind: 'won'; readonly acquisitions: Acquisition[] }
  | { readonly kind: 'write'; readonly members: GroupMember[] }
  /** Someone else holds `blocker` and it is not yet stale: read again after `waitMs`. */
  | { readonly kind: 'wait'; readonly waitMs: number };

/** One key of the group: its writes (for the record each write sends), its stale timer and this client's turn on it. */
interface Member {
  readonly key: LockKey;
  readonly writes: AcquisitionWrites;
  readonly watch: StaleWatch;
  readonly turn: TurnPlan;
}

export class GroupAcquireLoop implements Disposable {
  readonly #ctx: GroupAcquireParts;
  readonly #members: Member[];
  readonly #options: Resolved<AcquireLocksOptions>;
  readonly #refreshMs: number;
  readonly #leaseDurationMs: number;
  readonly #additionalAttributes: LockItem;
  readonly #deadline: AcquireDeadline;
  /** Transactions of this call whose outcome is unknown. */
  readonly #unknown: GroupAttempt[] = [];
  /** Why the newest round did not take the group, thrown once the deadline has passed. */
  #refusal: LockNotGrantedError | undefined;
  /** Transactions in a row lost to races; from the second on, the next read waits a refresh period. */
  #racesInARow = 0;
  /** A round read once more after the wait ran out, when its reads failed just as every key turned stale. */
  readonly #lateTakeover = new LateTakeover();
  /** Whether this call saw someone else hold one of the locks. */
  #waitedForAnother = false;

  constructor(ctx: GroupAcquireParts, keys: readonly LockKey[], options: Resolved<AcquireLocksOptions>) {
    this.#ctx = ctx;
    this.#options = options;
    this.#refreshMs = options.refreshPeriod;
    this.#leaseDurationMs = options.leaseDuration;
    this.#additionalAttributes = encodeAdditionalAttributes(options.additionalAttributes ?? {});
    const turn = turnRequestOf(options);
    this.#members = keys.map((key) => ({
      key,
      writes: new AcquisitionWrites(ctx, key, options),
      watch: new StaleWatch(ctx.clockBound),
      turn: ctx.turns.plan(lockId(key), turn),
    }));
    this.#deadline = new AcquireDeadline({
      clock: ctx.clock,
      waitMs: options.additionalTimeToWaitForLock,
      graceMs: Math.max(this.#refreshMs, this.#leaseDurationMs),
      signal: options.signal,
    });
  }

  /**
   * Runs rounds until every lock is the call's, or the call ends with the
   * reason it did not get them. When this client's turn on one of the keys
   * is over (turns.ts), it first stands aside, sending nothing, as long as
   * the longest of those turns says.
   */
  async run(): Promise<Acquisition[]> {
    const standAsideMs = Math.max(0, ...this.#members.map(({ turn }) => turn.standAsideMs));
    if (standAsideMs > 0) await this.#sleep(standAsideMs);
    const won = await this.#rounds();
    for (const { turn } of this.#members) this.#ctx.turns.taken(turn, won[0]?.lookupTime ?? this.#ctx.clock.now(), this.#waitedForAnother);
    return won;
  }

  async #rounds(): Promise<Acquisition[]> {
    for (;;) {
      this.#options.signal?.throwIfAborted();
      let waitMs: number;
      let read = false;
      try {
        if (this.#ctx.replication?.passed === false) await this.#ctx.replication.ensure(this.#deadline.requestSignal);
        const seen = await this.#readAll();
        read = true;
        const resolved = await this.#resolve(seen);
        if (resolved === 'read-again') continue;
        const round: Round = resolved === undefined ? this.#judge(seen) : { kind: 'won', acquisitions: resolved };
        const won = round.kind === 'write' ? await this.#write(round.members) : round.kind === 'won' ? round.acquisitions : undefined;
        if (won !== undefined) {
          const handed = await this.#handOver(won);
          if (handed !== undefined) return handed;
          // A renewal was refused: someone took a lock over while the reply was late. Read again a period later.
          waitMs = this.#refreshMs;
        } else if (round.kind === 'write') {
          waitMs = this.#racesInARow > 1 ? this.#refreshMs : 0;
        } else {
          this.#racesInARow = 0;
          waitMs = round.kind === 'wait' ? round.waitMs : this.#refreshMs;
        }
      } catch (error) {
        if (error instanceof DynamoDBTooSlowError) throw error;
        await this.#sortFailure(error);
        waitMs = this.#refreshMs;
        const watches = this.#members.map(({ watch }) => watch);
        if (!read && this.#deadline.passed && this.#lateTakeover.claim(this.#deadline, watches, this.#ctx.clock.now())) continue;
      }
      if (this.#deadline.passed) throw this.#refusal ?? this.#notAcquired('the locks stayed held', undefined);
      await this.#sleep(waitMs);
    }
  }

  [Symbol.dispose](): void {
    this.#deadline[Symbol.dispose]();
  }

  /** A consistent read of every key, each through the gate (heartbeats first). */
  #readAll(): Promise<(LockObservation | undefined)[]> {
    return Promise.all(this.#members.map(({ key }) => this.#admitted((signal) => this.#ctx.requests.read(key, signal))));
  }

  /**
   * Judges the transactions of unknown outcome on what was read: the group
   * is ours when one of them shows on every key. One that shows on some only
   * was applied and overtaken: what is still ours is released, and the keys
   * are read again.
   */
  async #resolve(seen: readonly (LockObservation | undefined)[]): Promise<Acquisition[] | 'read-again' | undefined> {
    for (const [index, attempt] of this.#unknown.entries()) {
      const reading = readAttempt(attempt, seen, this.#ctx.ownerName);
      if (reading.kind === 'ours') return acquisitionsOf(attempt, this.#additionalAttributes);
      if (reading.kind === 'overtaken') {
        this.#unknown.splice(index, 1);
        const acquisitions = acquisitionsOf(attempt, this.#additionalAttributes);
        await this.#ctx.releaseStray(reading.ours.map((i) => acquisitions[i] as Acquisition));
        return 'read-again';
      }
    }
    return undefined;
  }

  /** Java's decision on each key as read: write them all once none is held by someone else unless stale; sends nothing. */
  #judge(seen: readonly (LockObservation | undefined)[]): Round {
    const now = this.#ctx.clock.now();
    let takeoverAt = -Infinity;
    let longestLease = 0;
    const members = this.#members.map((member, i): GroupMember | undefined => {
      const existing = seen[i];
      if (existing !== undefined && !existing.record.isReleased) longestLease = Math.max(longestLease, existing.record.leaseDurationMs);
      const decision = this.#decide(member, existing, now);
      if (decision.kind !== 'write') {
        takeoverAt = Math.max(takeoverAt, member.watch.takeoverAt());
        return undefined;
      }
      return { record: member.writes.recordFor(decision.existing), path: decision.path };
    });
    // The first round that finds holders adds the longest of their leases: the group is taken only once every one of them is over.
    if (longestLease > 0) this.#deadline.addHolderLease(longestLease);
    if (takeoverAt === -Infinity) return { kind: 'write', members: members as GroupMember[] };
    return { kind: 'wait', waitMs: Math.min(this.#refreshMs, Math.max(0, takeoverAt - now)) };
  }

  /**
   * Java's decision on one key as read (acquisition-rule.ts): a write, or a
   * wait while someone else holds it and it is not yet stale. A group neither
   * skips the wait nor takes only existing locks, and judges its own writes
   * of unknown outcome across its keys (#resolve).
   */
  #decide(member: Member, existing: LockObservation | undefined, now: number): Decision {
    const watched = member.watch.take(existing, now);
    if (heldByAnother(existing, this.#ctx.ownerName)) this.#waitedForAnother = true;
    const decision = decide({ existing, watched }, { acquireReleasedLocksConsistently: this.#options.acquireReleasedLocksConsistently });
    if (decision.kind !== 'write' && existing !== undefined) {
      this.#refusal = this.#notAcquired('another client holds one of the locks', member.key, holderOf(existing.record));
    }
    return decision;
  }

  /**
   * Sends the transaction. Returns the group when it committed; `undefined`
   * when it lost a race or its outcome is unknown (remembered, judged by the
   * next read). Anything else throws.
   */
  async #write(members: GroupMember[]): Promise<Acquisition[] | undefined> {
    if (members.some(({ path }) => path.kind === 'expired')) this.#lateTakeover.sent();
    const departure = new Departure(this.#ctx.clock);
    let tokens: readonly (bigint | undefined)[] = [];
    try {
      await this.#admitted((signal) => this.#ctx.requests.writeGroup(members, signal, (chosen) => (tokens = chosen), departure));
    } catch (error) {
      if (kindOfFailure(error, 'group') === 'race') {
        // Canceled, so nothing of it was applied (the SDK's retries share its ClientRequestToken).
        this.#racesInARow++;
        this.#refusal = this.#notAcquired('another client wrote one of the locks first', this.#members[0]?.key, undefined, error);
        return undefined;
      }
      if (classifyFailedWrite(error, { ownerName: this.#ctx.ownerName, recordVersionNumbers: [] }).outcome !== 'unknown') throw error;
      this.#unknown.push({ members, tokens, ...departure.lookup() });
      this.#refusal = this.#unavailable(error);
      return undefined;
    }
    for (const { record } of members) this.#ctx.observations.forget(lockId(record));
    return acquisitionsOf({ members, tokens, ...departure.lookup() }, this.#additionalAttributes);
  }

  /**
   * The group as it goes to the caller, every lock renewed first if the
   * transaction's answer came late (late-reply.ts). `undefined` when a
   * renewal was refused: the other locks were released, read again.
   */
  async #handOver(won: Acquisition[]): Promise<Acquisition[] | undefined> {
    const renew = (acquisition: Acquisition, i: number, bound: AbortSignal) =>
      this.#admitted((signal) => (this.#members[i] as Member).writes.renew(acquisition, AbortSignal.any([signal, bound])), 'renewal');
    const handed = await handOver(this.#ctx, this.#firstKey, won, renew);
    if (handed.kind === 'handed') return handed.acquisitions;
    this.#refusal = this.#notAcquired('another client took one of the locks over', this.#firstKey, undefined, handed.error);
    return undefined;
  }

  /** Sorts a failed round: a reason to try again before the deadline, or the end of the call. */
  async #sortFailure(error: unknown): Promise<void> {
    if (this.#options.signal?.aborted) throw this.#options.signal.reason;
    if (this.#deadline.cutOff) throw this.#unavailable(error);
    const kind = kindOfFailure(error, 'group');
    // A conflict with another transaction on a key is worth trying again, as throttling is.
    if (kind === 'transient' || kind === 'race') {
      this.#ctx.logger?.warn({ err: error, keys: this.#members.length }, 'group lock acquisition attempt failed; retrying');
      this.#refusal = this.#unavailable(error);
      return;
    }
    throw kind === 'final' ? error : await this.#ctx.explain(error);
  }

  /** Runs a request once the gate lets it through, bounded like every request of an acquisition (request-bound.ts). */
  #admitted<T>(request: (signal: AbortSignal) => Promise<T>, lane?: GateLane): Promise<T> {
    return admittedForCall(this.#ctx.gate, this.#deadline, Math.max(this.#refreshMs, this.#leaseDurationMs), request, lane);
  }

  async #sleep(ms: number): Promise<void> {
    try {
      await abortableSleep(ms, this.#deadline.requestSignal);
    } catch (error) {
      if (this.#options.signal?.aborted) throw this.#options.signal.reason;
      // Cut off between rounds: when the last round was answered, the call ends as it found the locks, as a single lock's does.
      if (this.#refusal !== undefined && !(this.#refusal instanceof DynamoDBUnavailableError)) throw this.#refusal;
      throw this.#unavailable(error);
    }
  }

  #unavailable(cause: unknown): DynamoDBUnavailableError {
    return new DynamoDBUnavailableError(this.#firstKey, cause, this.#refusal?.holder);
  }

  #notAcquired(reason: string, key: LockKey | undefined, holder?: LockHolder, cause?: unknown): LockNotGrantedError {
    const waited = Math.round(this.#deadline.elapsed);
    return new LockNotGrantedError(`${reason} (group of ${this.#members.length}, waited ${waited} ms)`, key ?? this.#firstKey, holder, {
      cause,
    });
  }

  get #firstKey(): LockKey {
    return (this.#members[0] as Member).key;
  }
}
