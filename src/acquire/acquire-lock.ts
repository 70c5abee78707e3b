/**
 * The acquire loop of the Java client (PROTOCOL.md §5): read the lock
 * consistently, take it when it is absent or released, and take it over only
 * after its RVN stayed unchanged for its whole lease on this process's
 * monotonic clock.
 */
import { randomUUID } from 'node:crypto';
import type { Logger } from '../base/logger.js';
import { toBytes } from '../primitives/bytes.js';
import type { MonotonicClock } from '../base/clock.js';
import {
  isClientSideError,
  isConditionalCheckFailed,
  isThrottling,
  isTransactionConflict,
  isTransactionRace,
  httpStatusOf,
} from '../dynamodb/sdk-errors.js';
import {
  DynamoDBUnavailableError,
  InvalidArgumentError,
  LockCurrentlyUnavailableError,
  LockNotGrantedError,
  isMalformedLockItemError,
  type LockHolder,
} from '../base/errors.js';
import type { AcquisitionRequests } from '../dynamodb/acquisition-requests.js';
import { lockId } from '../base/lock-key.js';
import { holderOf } from '../protocol/lock-holder.js';
import type { LockObservationCache } from './observation-cache.js';
import { ACQUIRE_DEFAULTS } from '../settings/defaults.js';
import { checkDuration, checkLockLease } from '../settings/options.js';
import {
  encodeAdditionalAttributes,
  validateItemSize,
  validateLockKey,
  encodeLockItem,
  type AcquisitionPath,
  type AdditionalAttributes,
  type LockItem,
  type LockRecord,
  type LockRecordToWrite,
  type LockTable,
} from '../protocol/index.js';
import type { LockKey } from '../base/lock-key.js';
import type { KeySchemaProof } from './key-schema-proof.js';
import type { AcquisitionGate } from './acquisition-gate.js';
import type { LockPollers, PollSubscription } from './lock-poller.js';
import { AcquireDeadline } from './acquire-deadline.js';
import { withinBound } from './request-bound.js';
import { StaleWatch } from './stale-watch.js';
import type { LockObservation } from '../dynamodb/read-lock.js';
import { classifyFailedWrite } from '../dynamodb/write-outcome.js';
import type { ReplicationCheck } from '../dynamodb/table-replication.js';
import { LockTableReplicationError } from '../base/lock-table-replication-error.js';
import type { TurnPlan, Turns } from './turns.js';

/** Options of one `acquireLock` call (Java's `AcquireLockOptions`, PROTOCOL.md §8.2). */
export interface AcquireLockOptions {
  /** The sort key value; required exactly when the table has a sort key. */
  readonly sortKey?: string;
  /** Data to store with the lock (a string is stored as its UTF-8 bytes). @default none */
  readonly data?: Uint8Array | string;
  /**
   * Write `data` even when the item already carries data. When false, data
   * left by the previous holder is carried over. @default true
   */
  readonly replaceData?: boolean;
  /** Delete the item on release (true) or keep it marked released (false). @default true */
  readonly deleteLockOnRelease?: boolean;
  /** Only take a lock whose item already exists (released or expired); never create one. @default false */
  readonly acquireOnlyIfLockAlreadyExists?: boolean;
  /** Milliseconds between reads while waiting. @default 1000 */
  readonly refreshPeriod?: number;
  /**
   * How long this client may keep a lock it releases and asks for again at
   * once (within `refreshPeriod` of the release) before it stands aside:
   * the next such call sends nothing for one `refreshPeriod` after the
   * release, so that waiters of other clients can take the lock. `Infinity`
   * never stands aside. A call that may not wait a refresh period
   * (`shouldSkipBlockingWait`, or `additionalTimeToWaitForLock` below
   * `refreshPeriod`) never stands aside either. @default 2 × refreshPeriod
   */
  readonly turnLength?: number;
  /**
   * Milliseconds to wait beyond the lease of the first holder seen; `Infinity`
   * waits until the lock is acquired or the signal aborts. @default 1000
   */
  readonly additionalTimeToWaitForLock?: number;
  /** Lease of this lock in milliseconds; waiters read it from the item. @default the client's `leaseDuration` */
  readonly leaseDuration?: number;
  /** Extra attributes stored on the item. Protocol attribute names are refused. @default none */
  readonly additionalAttributes?: AdditionalAttributes;
  /** Write with UpdateItem, keeping attributes of the old item this write does not set. @default false */
  readonly updateExistingLockRecord?: boolean;
  /** Take a released lock only if nobody took it since it was read. @default false */
  readonly acquireReleasedLocksConsistently?: boolean;
  /** Return the lock this client already holds instead of waiting for it. @default false */
  readonly reentrant?: boolean;
  /**
   * Never wait for a lock someone else holds: fail at once with
   * `LockCurrentlyUnavailableError`. Repeated calls still take over a lock
   * whose RVN stayed unchanged for its lease. @default false
   */
  readonly shouldSkipBlockingWait?: boolean;
  /** Call `callback` once the lock has gone `safeTimeWithoutHeartbeat` ms without a confirmed heartbeat. */
  readonly sessionMonitor?: {
    readonly safeTimeWithoutHeartbeat: number;
    readonly callback?: () => void;
  };
  /** Cancels the wait at once; rejects with `signal.reason`. */
  readonly signal?: AbortSignal;
}

export interface AcquireContext {
  /** The reads and writes of an acquisition, fenced when the client fences. */
  readonly requests: AcquisitionRequests;
  readonly table: LockTable;
  readonly ownerName: string;
  readonly defaultLeaseDuration: number;
  readonly heartbeatPeriod: number;
  readonly backgroundHeartbeats: boolean;
  /** The client's `safetyMargin` option, if set. */
  readonly safetyMargin: number | undefined;
  readonly clock: MonotonicClock;
  readonly observations: LockObservationCache;
  /** The client's polling loops, shared by its acquisitions waiting for the same lock. */
  readonly pollers: LockPollers;
  /** Whether the table is known to have this client's key schema, so that the new-lock write may go first. */
  readonly keySchema: KeySchemaProof;
  readonly logger: Logger | undefined;
  /** Maps errors about the table itself to typed errors. */
  readonly explain: (error: unknown) => Promise<unknown>;
  /** Holds acquisition requests back while the client's heartbeats are behind. */
  readonly gate: AcquisitionGate;
  /** This client's turns on the locks it releases and asks for again at once. */
  readonly turns: Turns;
  /** The lock table's replication, checked before the client's first lock write; absent when the user opted out. */
  readonly replication: ReplicationCheck | undefined;
}

/** A successful acquisition write. */
export interface Acquisition {
  readonly record: LockRecordToWrite;
  /** Monotonic time just before the write was sent. */
  readonly lookupTime: number;
  /** Wall-clock time at `lookupTime`, where the clock has one. */
  readonly lookupWallTime: number | undefined;
  readonly additionalAttributes: LockItem;
  /** With fencing: the token this write gets if it commits, known before it is sent. */
  fencingToken?: bigint | undefined;
}

/** Checks everything about the call that can be checked without DynamoDB. */
export function validateAcquireOptions(
  ctx: Pick<AcquireContext, 'table' | 'heartbeatPeriod' | 'backgroundHeartbeats' | 'safetyMargin' | 'defaultLeaseDuration' | 'ownerName'>,
  key: LockKey,
  options: AcquireLockOptions,
): void {
  validateLockKey(ctx.table, key);
  if (options.refreshPeriod !== undefined) checkDuration('refreshPeriod', options.refreshPeriod);
  if (options.turnLength !== undefined) checkDuration('turnLength', options.turnLength, { allowInfinity: true });
  if (options.additionalTimeToWaitForLock !== undefined) {
    checkDuration('additionalTimeToWaitForLock', options.additionalTimeToWaitForLock, { allowInfinity: true });
  }
  const lease = options.leaseDuration === undefined ? ctx.defaultLeaseDuration : checkLockLease(options.leaseDuration, ctx);
  // The whole item is known but for the RVN (always 36 characters): check names and size before any call.
  validateItemSize(
    encodeLockItem(ctx.table, {
      ...key,
      ownerName: ctx.ownerName,
      leaseDurationMs: lease,
      recordVersionNumber: '00000000-0000-0000-0000-000000000000',
      data: toBytes(options.data),
      additionalAttributes: options.additionalAttributes ?? {},
    }),
  );
  const monitor = options.sessionMonitor;
  if (monitor !== undefined) {
    const safe = monitor.safeTimeWithoutHeartbeat;
    if (!(typeof safe === 'number' && safe > ctx.heartbeatPeriod && safe < lease)) {
      throw new InvalidArgumentError(
        'INVALID_SESSION_MONITOR',
        `sessionMonitor.safeTimeWithoutHeartbeat (${String(safe)} ms) must be greater than heartbeatPeriod (${ctx.heartbeatPeriod} ms) and less than the lease (${lease} ms)`,
      );
    }
  }
}

/**
 * Acquires the lock: Java's acquire loop (PROTOCOL.md §5), with three
 * shortcuts that leave every request and every decision Java's, and turns
 * (turns.ts), which change only when requests are sent:
 *
 * - A free lock is taken in one call: the new-lock write goes first, and
 *   when its condition fails, its ALL_OLD item is the consistent read Java
 *   would have made, so a released lock costs one more write, not a read.
 * - A refused write's ALL_OLD item is acted on at once instead of being read
 *   again after a refresh period.
 * - While waiting, a held lock's takeover is written at the instant its RVN
 *   has been unchanged for its lease, not at the next poll; polls (shared by
 *   the client's waiters for this lock) only notice heartbeats and releases.
 *
 * Turns: a back-to-back acquisition whose turn is over waits a refresh
 * period before its first request, and a waiter that had a turn leaves a
 * lock it finds free to others for one read.
 */
export async function acquire(ctx: AcquireContext, key: LockKey, options: AcquireLockOptions): Promise<Acquisition> {
  const refreshMs = options.refreshPeriod ?? ACQUIRE_DEFAULTS.refreshPeriod;
  const turn = ctx.turns.plan(lockId(key), {
    refreshMs,
    turnLengthMs: options.turnLength ?? ACQUIRE_DEFAULTS.turnLengthInRefreshPeriods * refreshMs,
    mayWait:
      !options.shouldSkipBlockingWait && (options.additionalTimeToWaitForLock ?? ACQUIRE_DEFAULTS.additionalTimeToWaitForLock) >= refreshMs,
  });
  const loop = new AcquireLoop(ctx, key, options, turn);
  try {
    const acquisition = await loop.run();
    ctx.turns.taken(turn, acquisition.lookupTime, loop.waitedForAnother);
    return acquisition;
  } finally {
    loop[Symbol.dispose]();
  }
}

/** A write DynamoDB just refused, and the RVN of the item it was decided on. */
export interface RefusedWrite {
  readonly path: AcquisitionPath['kind'];
  readonly recordVersionNumber: string | undefined;
}

/** What the loop does about one observation of the lock, or about its stale timer running out. */
export type Decision =
  /** The item is a write of this call whose outcome was unknown: it was applied, so the lock is ours. */
  | { readonly kind: 'ours'; readonly acquisition: Acquisition }
  /** Send this write, decided on `existing` (`undefined`: no item). */
  | { readonly kind: 'write'; readonly path: AcquisitionPath; readonly existing: LockObservation | undefined }
  /** Someone else holds it and its RVN has not yet stayed unchanged for its lease: wait. */
  | { readonly kind: 'wait' }
  /** Not this time; a later observation may do before the deadline. */
  | { readonly kind: 'retry'; readonly refusal: LockNotGrantedError }
  /** `shouldSkipBlockingWait`, and someone else holds it: the call ends. */
  | { readonly kind: 'unavailable'; readonly error: LockCurrentlyUnavailableError };

/** What the loop acts on next. */
type Step =
  /** The first attempt: the new-lock write, no read before it (PROTOCOL.md §9.2 item 1). */
  | { readonly kind: 'create' }
  /** A consistent read of our own, then Java's decision. */
  | { readonly kind: 'read' }
  /** Java's decision on what a poll, or a refused write's ALL_OLD item, showed (`undefined`: no item). */
  | {
      readonly kind: 'decide';
      readonly observation: LockObservation | undefined;
      readonly at: number;
      readonly refused?: RefusedWrite | undefined;
    }
  /** The timed RVN has been unchanged for its lease: write the takeover now, without a read. */
  | { readonly kind: 'takeover' }
  /** A poll failed; handled like a failed read of our own. */
  | { readonly kind: 'failed'; readonly error: unknown };

/** What one step came to. */
type Outcome =
  | { readonly kind: 'won'; readonly acquisition: Acquisition }
  /** Go on with `step` at once: what the new-lock write's refusal showed is the first read. */
  | { readonly kind: 'again'; readonly step: Step }
  /**
   * Not taken this time. Past the deadline the call ends with `refusal` (or
   * the plain "not acquired"); before it, it goes on with `following`, or
   * waits for the next poll.
   */
  | { readonly kind: 'not-taken'; readonly refusal?: LockNotGrantedError | undefined; readonly following?: Step | undefined };

/** Thrown inside one step when that attempt failed but a later one may succeed before the deadline. */
class RetryableRefusal extends Error {
  constructor(readonly refusal: LockNotGrantedError) {
    super(refusal.message);
  }
}

/** One `acquireLock` call: the state Java's loop keeps between its reads, and one method per thing it does. */
export class AcquireLoop implements Disposable {
  readonly #ctx: AcquireContext;
  readonly #key: LockKey;
  readonly #id: string;
  readonly #options: AcquireLockOptions;
  readonly #refreshMs: number;
  readonly #leaseDurationMs: number;
  readonly #newData: Uint8Array | undefined;
  readonly #additionalAttributes: LockItem;
  readonly #deadline: AcquireDeadline;
  readonly #watch = new StaleWatch();
  /** This call's writes whose outcome is unknown: the table may hold any of them, and then the lock is ours. */
  readonly #unconfirmed: Acquisition[] = [];
  /** The holder the newest answer showed, named by the error the call may end with. */
  #lastHolder: LockHolder | undefined;
  /** Arrival time of the newest response acted on; older poll outcomes tell nothing new. */
  #newestAt = -Infinity;
  #polls: PollSubscription | undefined;
  /** Milliseconds before this call's first request: its client stands aside for waiters (turns.ts). */
  readonly #standAsideMs: number;
  #waitedForAnother = false;
  /** Reads in a row that found the lock free; standing aside counts as the first. */
  #freeReadsInARow: number;
  /** Whether the call may leave a free lock to other waiters for a read: only one that may wait a refresh period. */
  readonly #mayDefer: boolean;

  /** `turn`: this client's turn on the lock, which may say to stand aside first (turns.ts). */
  constructor(ctx: AcquireContext, key: LockKey, options: AcquireLockOptions, turn?: Pick<TurnPlan, 'standAsideMs' | 'request'>) {
    this.#standAsideMs = turn?.standAsideMs ?? 0;
    this.#mayDefer = turn?.request.mayWait ?? false;
    this.#freeReadsInARow = this.#standAsideMs > 0 ? 1 : 0;
    this.#ctx = ctx;
    this.#key = key;
    this.#id = lockId(key);
    this.#options = options;
    this.#refreshMs = options.refreshPeriod ?? ACQUIRE_DEFAULTS.refreshPeriod;
    this.#leaseDurationMs = options.leaseDuration ?? ctx.defaultLeaseDuration;
    this.#newData = toBytes(options.data);
    this.#additionalAttributes = encodeAdditionalAttributes(options.additionalAttributes ?? {});
    this.#deadline = new AcquireDeadline({
      clock: ctx.clock,
      waitMs: options.additionalTimeToWaitForLock ?? ACQUIRE_DEFAULTS.additionalTimeToWaitForLock,
      graceMs: Math.max(this.#refreshMs, this.#leaseDurationMs),
      signal: options.signal,
    });
  }

  /** Runs the loop until the lock is this call's, or the call ends with the reason it did not get it. */
  async run(): Promise<Acquisition> {
    let step: Step;
    if (this.#standAsideMs > 0) step = await this.#wait(undefined);
    // Java semantics for acquireOnlyIfLockAlreadyExists: read first, never create.
    else step = this.#options.acquireOnlyIfLockAlreadyExists || !this.#ctx.keySchema.proven ? { kind: 'read' } : { kind: 'create' };
    for (;;) {
      this.#options.signal?.throwIfAborted();
      const outcome = await this.#take(step);
      if (outcome.kind === 'won') return outcome.acquisition;
      if (outcome.kind === 'again') {
        step = outcome.step;
        continue;
      }
      if (this.#deadline.passed) throw outcome.refusal ?? this.#notAcquired();
      step = outcome.following ?? (await this.#wait(outcome.refusal));
    }
  }

  /**
   * Java's decision on one observation of the lock (`undefined`: no item), the
   * body of its loop after the read; sends nothing. `refused` is the write
   * DynamoDB just refused, which is not sent again on the same item.
   */
  judge(existing: LockObservation | undefined, refused?: RefusedWrite): Decision {
    const options = this.#options;
    if (existing === undefined || existing.record.isReleased) {
      // The timed RVN is no longer held: its takeover instant means nothing now.
      this.#watch.forget();
      // Leave a free lock to the waiters whose turn comes first, for one read (turns.ts).
      this.#freeReadsInARow++;
      // Only with a refresh period of the call's time left: the next read must still come before its deadline.
      const mayDefer = this.#mayDefer && this.#freeReadsInARow < 2 && this.#deadline.remaining >= this.#refreshMs;
      if (mayDefer && !this.#ctx.turns.mayTakeFree(this.#id)) return { kind: 'wait' };
    } else {
      this.#freeReadsInARow = 0;
    }
    if (existing === undefined) {
      if (options.acquireOnlyIfLockAlreadyExists) return { kind: 'retry', refusal: new LockNotGrantedError('Lock does not exist.', this.#key) };
      return this.#writeUnlessRefused({ kind: 'absent' }, existing, refused);
    }
    const { record } = existing;
    const ours = this.#unconfirmedWriteIn(record);
    if (ours !== undefined) return { kind: 'ours', acquisition: ours };
    this.#lastHolder = holderOf(record);
    if (!record.isReleased && record.ownerName !== this.#ctx.ownerName) {
      this.#waitedForAnother = true;
      this.#ctx.turns.sawHolder(this.#id, record.ownerName);
    }
    if (record.isReleased) {
      const readRecordVersionNumber = options.acquireReleasedLocksConsistently ? record.recordVersionNumber : undefined;
      return this.#writeUnlessRefused({ kind: 'released', readRecordVersionNumber }, existing, refused);
    }
    if (options.shouldSkipBlockingWait) {
      if (!this.#ctx.observations.isStale(this.#id, record.recordVersionNumber, record.leaseDurationMs)) {
        return { kind: 'unavailable', error: new LockCurrentlyUnavailableError(this.#key, holderOf(record)) };
      }
      return this.#writeUnlessRefused({ kind: 'expired', watchedRecordVersionNumber: record.recordVersionNumber }, existing, refused);
    }
    this.#deadline.addHolderLease(record.leaseDurationMs);
    this.#watch.observe(existing);
    return this.#judgeStaleness(refused);
  }

  /** Whether this call saw someone else hold the lock. */
  get waitedForAnother(): boolean {
    return this.#waitedForAnother;
  }

  [Symbol.dispose](): void {
    this.#deadline[Symbol.dispose]();
    this.#polls?.dispose();
  }

  /** The takeover, once the timed RVN has stayed unchanged for strictly longer than its lease on our clock; until then, wait. */
  #judgeStaleness(refused?: RefusedWrite): Decision {
    const timed = this.#watch.observation;
    if (timed === undefined || !this.#watch.isStale(this.#ctx.clock.now())) return { kind: 'wait' };
    return this.#writeUnlessRefused({ kind: 'expired', watchedRecordVersionNumber: timed.record.recordVersionNumber }, timed, refused);
  }

  #writeUnlessRefused(path: AcquisitionPath, existing: LockObservation | undefined, refused: RefusedWrite | undefined): Decision {
    if (refused !== undefined && refused.path === path.kind && refused.recordVersionNumber === existing?.record.recordVersionNumber) {
      // Trying again at once would only be refused again: wait for the next poll, as Java waits a refresh period.
      return { kind: 'retry', refusal: new LockNotGrantedError('another client acquired it first', this.#key, this.#lastHolder) };
    }
    return { kind: 'write', path, existing };
  }

  /** One step; a failure becomes the outcome it stands for, or ends the call. */
  async #take(step: Step): Promise<Outcome> {
    // The write this step may send, for telling what a refusal refused.
    let attempted: RefusedWrite | undefined;
    try {
      let won: Acquisition | undefined;
      // Before any step that may write; failing transiently, it is tried again within the call's wait.
      if (step.kind !== 'failed' && this.#ctx.replication?.passed === false) await this.#ctx.replication.ensure(this.#deadline.requestSignal);
      switch (step.kind) {
        case 'create':
          attempted = { path: 'absent', recordVersionNumber: undefined };
          won = await this.#write({ kind: 'absent' }, undefined);
          break;
        case 'read': {
          const existing = await this.#read();
          attempted = intendedWrite(existing);
          won = await this.#act(this.judge(existing));
          break;
        }
        case 'decide':
          if (step.at < this.#newestAt) break; // a poll that arrived before what this call already knows
          this.#newestAt = step.at;
          attempted = intendedWrite(step.observation);
          won = await this.#act(this.judge(step.observation, step.refused));
          break;
        case 'takeover':
          attempted = { path: 'expired', recordVersionNumber: this.#watch.observation?.record.recordVersionNumber };
          won = await this.#act(this.#judgeStaleness());
          break;
        case 'failed':
          throw step.error;
      }
      return won === undefined ? { kind: 'not-taken' } : { kind: 'won', acquisition: won };
    } catch (error) {
      return this.#afterFailure(error, step, attempted);
    }
  }

  /** A consistent read of our own, through the gate (heartbeats first). */
  async #read(): Promise<LockObservation | undefined> {
    const existing = await this.#inTurn((signal) => this.#ctx.requests.read(this.#key, signal));
    this.#newestAt = this.#ctx.clock.now();
    this.#ctx.keySchema.confirm();
    return existing;
  }

  /**
   * Runs a request once the gate lets it through (heartbeats first, a bounded
   * number in flight). The wait for that turn counts against the call's
   * deadline only while the queue stands still (acquire-deadline.ts). The
   * request follows the call's cut-off, and is abandoned once unanswered for
   * the request bound (request-bound.ts), also when the call has no deadline.
   */
  #inTurn<T>(request: (signal: AbortSignal) => Promise<T>): Promise<T> {
    this.#deadline.pause();
    return this.#ctx.gate.run(() => {
      this.#deadline.resume();
      return withinBound(this.#requestBoundMs, this.#deadline.requestSignal, request);
    }, this.#deadline.requestSignal);
  }

  /** A request unanswered this long is abandoned: the cut-off's grace, a lease (or a refresh period if longer). */
  get #requestBoundMs(): number {
    return Math.max(this.#refreshMs, this.#leaseDurationMs);
  }

  async #act(decision: Decision): Promise<Acquisition | undefined> {
    switch (decision.kind) {
      case 'ours':
        return decision.acquisition;
      case 'write':
        return this.#write(decision.path, decision.existing);
      case 'wait':
        return undefined;
      case 'retry':
        throw new RetryableRefusal(decision.refusal);
      case 'unavailable':
        throw decision.error;
    }
  }

  /** Writes `path`, decided on `existing`, through the gate (heartbeats first). */
  async #write(path: AcquisitionPath, existing: LockObservation | undefined): Promise<Acquisition> {
    const replaceData = this.#options.replaceData ?? ACQUIRE_DEFAULTS.replaceData;
    const record: LockRecordToWrite = {
      ...this.#key,
      ownerName: this.#ctx.ownerName,
      leaseDurationMs: this.#leaseDurationMs,
      recordVersionNumber: randomUUID(),
      data: !replaceData && existing?.record.data !== undefined ? existing.record.data : this.#newData,
      additionalAttributes: this.#options.additionalAttributes ?? {},
    };
    return this.#inTurn((signal) => this.#send(record, path, signal));
  }

  /**
   * Sends one acquisition write. A write whose outcome is unknown is
   * remembered; a refusal that shows one of this call's writes in the table
   * means that write was applied, and the lock is ours.
   */
  async #send(record: LockRecordToWrite, path: AcquisitionPath, signal: AbortSignal): Promise<Acquisition> {
    // Stamped before sending: the lease counts from the earliest moment the write can have taken effect.
    const acquisition: Acquisition = {
      record,
      lookupTime: this.#ctx.clock.now(),
      lookupWallTime: this.#ctx.clock.wallNow?.(),
      additionalAttributes: this.#additionalAttributes,
    };
    const options = { updateExistingLockRecord: this.#options.updateExistingLockRecord };
    try {
      await this.#ctx.requests.write(record, path, options, signal, (token) => (acquisition.fencingToken = token));
    } catch (error) {
      const applied = this.#rememberUnconfirmed(acquisition, error);
      if (applied === undefined) throw error;
      this.#ctx.observations.forget(this.#id);
      return applied;
    }
    this.#ctx.observations.forget(this.#id);
    return acquisition;
  }

  /**
   * Sorts the failure of `write`: one of unknown outcome joins the writes the
   * table may hold. Returns the write of this call the failure shows applied
   * (this one, or one remembered before), if any.
   */
  #rememberUnconfirmed(write: Acquisition, error: unknown): Acquisition | undefined {
    const candidates = [write, ...this.#unconfirmed];
    const failed = classifyFailedWrite(error, {
      ownerName: this.#ctx.ownerName,
      recordVersionNumbers: candidates.map((candidate) => candidate.record.recordVersionNumber),
    });
    if (failed.outcome === 'unknown') this.#unconfirmed.push(write);
    if (failed.outcome !== 'applied') return undefined;
    return candidates.find((candidate) => candidate.record.recordVersionNumber === failed.recordVersionNumber);
  }

  /** The write of this call whose RVN the item carries, if the item is one this call wrote without learning so. */
  #unconfirmedWriteIn(record: LockRecord): Acquisition | undefined {
    if (record.ownerName !== this.#ctx.ownerName || record.isReleased) return undefined;
    return this.#unconfirmed.find((write) => write.record.recordVersionNumber === record.recordVersionNumber);
  }

  /** Sorts a failed step: a refusal to act on, a reason to try again later, or the end of the call. */
  async #afterFailure(error: unknown, step: Step, attempted: RefusedWrite | undefined): Promise<Outcome> {
    const signal = this.#options.signal;
    if (signal?.aborted) throw signal.reason;
    const key = this.#key;
    if (this.#deadline.cutOff) throw new DynamoDBUnavailableError(key, error, this.#lastHolder);
    if (error instanceof RetryableRefusal) return { kind: 'not-taken', refusal: error.refusal };
    if (isConditionalCheckFailed(error)) {
      const arrivedAt = this.#ctx.clock.now();
      const current = this.#ctx.requests.observationOfRefusal(error, arrivedAt);
      if (current !== undefined) this.#lastHolder = holderOf(current.record);
      if (step.kind === 'create') {
        // Not a lost race: the lock exists. Its item is the read Java would have made first.
        return { kind: 'again', step: current === undefined ? { kind: 'read' } : { kind: 'decide', observation: current, at: arrivedAt } };
      }
      if (current === undefined && attempted !== undefined && attempted.path !== 'absent') {
        // A write conditioned on an item, refused without one: the item is gone. That is a read of "no item".
        return { kind: 'again', step: { kind: 'decide', observation: undefined, at: arrivedAt, refused: attempted } };
      }
      if (this.#options.shouldSkipBlockingWait) {
        // A refusal without the item (a batch's `DuplicateItem`) names no holder, and may be our own write
        // applied by an earlier attempt: read it, as the refusal of a PutItem would have shown it.
        if (current === undefined) return { kind: 'again', step: { kind: 'read' } };
        throw new LockCurrentlyUnavailableError(key, this.#lastHolder, { cause: error });
      }
      return {
        kind: 'not-taken',
        refusal: new LockNotGrantedError('another client acquired it first', key, this.#lastHolder, { cause: error }),
        following: current === undefined ? undefined : { kind: 'decide', observation: current, at: arrivedAt, refused: attempted },
      };
    }
    if (isTransactionRace(error) || isTransactionConflict(error)) {
      // A fenced acquisition lost a race without a word on the lock item, or a transaction holds the item: read it again.
      if (step.kind === 'create') return { kind: 'again', step: { kind: 'read' } };
      return {
        kind: 'not-taken',
        refusal: new LockNotGrantedError('another write of the lock was under way', key, this.#lastHolder, { cause: error }),
      };
    }
    if (isThrottling(error) || isClientSideError(error) || (httpStatusOf(error) ?? 0) >= 500) {
      this.#ctx.logger?.warn({ err: error, partitionKey: key.partitionKey, sortKey: key.sortKey }, 'lock acquisition attempt failed; retrying');
      return { kind: 'not-taken', refusal: new DynamoDBUnavailableError(key, error, this.#lastHolder) };
    }
    if (
      isMalformedLockItemError(error) ||
      error instanceof LockCurrentlyUnavailableError ||
      error instanceof InvalidArgumentError ||
      error instanceof LockTableReplicationError
    ) {
      throw error;
    }
    throw await this.#ctx.explain(error);
  }

  /**
   * Waits for the next poll, or for the takeover instant, whichever comes
   * first. `refusal`: why the last step did not take the lock.
   */
  async #wait(refusal: LockNotGrantedError | undefined): Promise<Step> {
    try {
      this.#polls ??= this.#ctx.pollers.subscribe(this.#key, this.#refreshMs, this.#standAsideMs > 0 ? this.#standAsideMs : undefined);
      const outcome = await this.#polls.next(this.#watch.takeoverAt(), this.#deadline.requestSignal);
      if (outcome === undefined) return { kind: 'takeover' };
      if (outcome.kind === 'error') return { kind: 'failed', error: outcome.error };
      this.#ctx.keySchema.confirm();
      return { kind: 'decide', observation: outcome.observation, at: outcome.at };
    } catch (error) {
      if (this.#options.signal?.aborted || !this.#deadline.cutOff) throw error;
      // Past the deadline while a poll got no answer: as the lock was last answered, if DynamoDB answered at all.
      if (refusal !== undefined && !(refusal instanceof DynamoDBUnavailableError)) throw refusal;
      if (refusal === undefined && this.#lastHolder !== undefined) throw this.#notAcquired();
      throw new DynamoDBUnavailableError(this.#key, refusal?.cause ?? error, this.#lastHolder);
    }
  }

  #notAcquired(): LockNotGrantedError {
    const waited = Math.round(this.#deadline.elapsed);
    return new LockNotGrantedError(`Didn't acquire lock after sleeping for ${waited} milliseconds`, this.#key, this.#lastHolder);
  }
}

/** The write a decision on `existing` would send, if any, named for telling what a refusal refused. */
function intendedWrite(existing: LockObservation | undefined): RefusedWrite {
  if (existing === undefined) return { path: 'absent', recordVersionNumber: undefined };
  return { path: existing.record.isReleased ? 'released' : 'expired', recordVersionNumber: existing.record.recordVersionNumber };
}
