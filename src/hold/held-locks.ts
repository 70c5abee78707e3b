/**
 * The locks one client holds, and all that happens to them while held:
 * background and manual heartbeats, release, and loss (the signal, the
 * events). Acquiring is elsewhere (acquire-lock.ts); this starts where an
 * acquisition ends, with {@link HeldLocks.track}.
 */
import type { DynamoDBClient, TransactWriteItem } from '@aws-sdk/client-dynamodb';
import { randomUUID } from 'node:crypto';
import type { Logger } from '../logger.js';
import type { AcquireLockOptions, Acquisition } from '../acquire/acquire-lock.js';
import { toBytes } from '../primitives/bytes.js';
import type { MonotonicClock } from '../clock.js';
import { deadline } from '../primitives/deadline.js';
import { httpStatusOf, isValidationError } from '../dynamodb/sdk-errors.js';
import { InvalidArgumentError, LockLostError, type LockHolder, type LockLossKind } from '../errors.js';
import { TypedEvents, type Subscription } from '../events.js';
import { guardedWrite, type GuardedWriteContext, type GuardedWriteOptions } from './guarded-write.js';
import { LockKeeper, type BatchHeartbeatOutcome, type KeeperHooks } from './lock-keeper.js';
import { HeartbeatScheduler } from '../heartbeat/scheduler.js';
import { SuspendWatch } from '../heartbeat/suspend-watch.js';
import { HeldLock } from './held-lock.js';
import { heldLockBehind, Lock, type LockOperations, type ReleaseLockOptions, type SendHeartbeatOptions } from '../lock.js';
import type { LockClientEvents } from '../lock-client-events.js';
import { holderOf } from '../lock-holder.js';
import { checkLockLease, safetyMarginFor, type ResolvedSettings } from '../options.js';
import {
  IS_RELEASED_VALUE,
  LockAttribute,
  assembleLockItem,
  buildHeartbeatRequest,
  buildLockGuard,
  buildHeartbeatStatement,
  buildReleaseRequest,
  canBatchHeartbeats,
  decodeLockItem,
  validateItemSize,
  withOldItemOnConditionFailure,
  type LockItem,
  type LockTable,
} from '../protocol/index.js';
import { sendStatementBatch, type StatementFailedError } from '../dynamodb/send-statement-batch.js';
import { sendWrite } from '../dynamodb/send-write.js';
import { attemptsOf, classifyFailedWrite } from '../dynamodb/write-outcome.js';

/**
 * The longest a due heartbeat waits for a fuller batch, as a share of the
 * heartbeat period (100 ms by default): well under the twentieth of a period
 * at which heartbeats count as behind and acquisitions are held back.
 */
const BATCH_WAIT_SHARE_OF_PERIOD = 1 / 50;

/** A held lock's signal lags a host's resume by at most a heartbeat period, and never more than this. */
const SUSPEND_CHECK_MAX_MS = 1_000;

/** What a heartbeat changes: the lease it writes, and data when a manual heartbeat sets or deletes it. */
interface HeartbeatChange {
  /** The lease to write; none to keep the lease in force when the write's turn comes. */
  readonly leaseDurationMs?: number | undefined;
  readonly data?: Uint8Array | undefined;
  readonly deleteData?: boolean | undefined;
}

interface HeartbeatWrite extends HeartbeatChange {
  readonly leaseDurationMs: number;
  readonly recordVersionNumber: string;
  /** Monotonic time just before it was sent. */
  readonly sentAt: number;
  readonly sentAtWall: number | undefined;
}

export interface HeldLocksOptions {
  readonly dynamoDB: Pick<DynamoDBClient, 'send'>;
  readonly table: LockTable;
  readonly settings: ResolvedSettings;
  readonly clock: MonotonicClock;
  readonly logger: Logger | undefined;
}

export class HeldLocks {
  readonly #dynamoDB: Pick<DynamoDBClient, 'send'>;
  readonly #table: LockTable;
  readonly #settings: ResolvedSettings;
  readonly #clock: MonotonicClock;
  readonly #logger: Logger | undefined;
  readonly #scheduler: HeartbeatScheduler<HeldLock>;
  readonly #keeper: LockKeeper;
  /** Heartbeats may go out in batches; off for good once the table refuses one. */
  #batching: boolean;
  readonly #events = new TypedEvents<LockClientEvents>((error, name) =>
    this.#logger?.error({ err: error, event: name }, 'a lock client event listener threw'),
  );
  readonly #lockOperations: LockOperations;
  readonly #guardedWrites: GuardedWriteContext;
  /** Held locks by in-process lock id. */
  readonly #locks = new Map<string, Lock>();
  /** Background heartbeats failed since the last confirmed one; `endangered` fires once per such episode. */
  readonly #endangered = new WeakSet<HeldLock>();
  /** Set by `stop()`: nothing is kept alive any more, so no lock may go back to being held. */
  #stopped = false;
  /** Ends locks at once after a host suspend, which the scheduler's timers cannot see. */
  readonly #suspends: SuspendWatch;

  constructor(options: HeldLocksOptions) {
    this.#dynamoDB = options.dynamoDB;
    this.#table = options.table;
    this.#settings = options.settings;
    this.#clock = options.clock;
    this.#logger = options.logger;
    this.#batching = this.#settings.heartbeatBatchSize > 1 && canBatchHeartbeats(this.#table);
    this.#scheduler = new HeartbeatScheduler<HeldLock>({
      clock: this.#clock,
      concurrency: this.#settings.heartbeatConcurrency,
      batches: {
        size: this.#settings.heartbeatBatchSize,
        canJoin: (task) => this.#keeper.canBatch(task),
        run: (tasks) => this.#keeper.beatBatch(tasks),
        maxWaitMs: this.#settings.heartbeatPeriod * BATCH_WAIT_SHARE_OF_PERIOD,
      },
      logger: this.#logger,
    });
    this.#keeper = new LockKeeper({
      scheduler: this.#scheduler,
      clock: this.#clock,
      heartbeatPeriod: this.#settings.heartbeatPeriod,
      backgroundHeartbeats: this.#settings.backgroundHeartbeats,
      hooks: this.#keeperHooks(),
      logger: this.#logger,
    });
    this.#suspends = new SuspendWatch(this.#clock, Math.min(this.#settings.heartbeatPeriod, SUSPEND_CHECK_MAX_MS), () => {
      for (const lock of [...this.#locks.values()]) this.#expireIfPastSafeTime(this.heldLockOf(lock));
    });
    this.#lockOperations = {
      clock: this.#clock,
      releaseLock: (lock, releaseOptions) => this.releaseLock(lock, releaseOptions),
      sendHeartbeat: (lock, heartbeatOptions) => this.sendHeartbeat(lock, heartbeatOptions),
      assertHeld: (lock) => this.assertStillHeld(this.heldLockOf(lock)),
      transactWrite: (lock, items, writeOptions) => this.transactWrite(lock, items, writeOptions),
      guardCondition: (lock) => this.guardCondition(lock),
    };
    this.#guardedWrites = {
      dynamoDB: this.#dynamoDB,
      table: this.#table,
      clock: this.#clock,
      assertStillHeld: (held) => this.assertStillHeld(held),
      lostByRefusal: (held, item, error) => this.#lostByRefusal(held, 'its guarded write was refused', item, error),
    };
  }

  /** This client's handle of the lock with this in-process id, while it holds it. */
  get(id: string): Lock | undefined {
    return this.#locks.get(id);
  }

  /** Handles of every lock held now. */
  all(): Lock[] {
    return [...this.#locks.values()];
  }

  on<Name extends keyof LockClientEvents>(name: Name, listener: (event: LockClientEvents[Name]) => void): Subscription {
    return this.#events.on(name, listener);
  }

  /**
   * True while a due heartbeat has waited to be sent longer than a twentieth
   * of a heartbeat period (for a free slot, a free batch slot or a fuller
   * batch): the locks held are falling behind.
   */
  heartbeatsBehind(): boolean {
    return this.#scheduler.overdueMs() > this.#settings.heartbeatPeriod / 20;
  }

  /**
   * Stops every heartbeat and check. A lock still held then can no longer be
   * kept: it ends as lost at once (its signal aborts, `lost` fires), and its
   * item lapses after its lease.
   */
  stop(): void {
    this.#stopped = true;
    for (const lock of [...this.#locks.values()]) {
      this.#markLost(this.heldLockOf(lock), 'expired', 'the client was closed without releasing it; it lapses after its lease');
    }
    this.#suspends.watching = false;
    this.#scheduler.close();
  }

  /** Starts holding a lock just acquired: its handle, its heartbeats, its expiry. */
  track(acquisition: Acquisition, options: AcquireLockOptions): Lock {
    const { record, lookupTime, lookupWallTime } = acquisition;
    const held = new HeldLock({
      key: record,
      ownerName: record.ownerName,
      recordVersionNumber: record.recordVersionNumber,
      leaseDurationMs: record.leaseDurationMs,
      lookupTime,
      lookupWallTime,
      data: record.data,
      additionalAttributes: acquisition.additionalAttributes,
      deleteLockOnRelease: options.deleteLockOnRelease ?? true,
      marginFor: (leaseDurationMs) => safetyMarginFor(leaseDurationMs, this.#settings),
      fencingToken: acquisition.fencingToken,
    });
    const lock = new Lock(held, this.#lockOperations);
    held.handle = lock;

    const previous = this.#locks.get(held.id);
    if (previous !== undefined) {
      // This client took over its own earlier, lapsed hold of the same lock.
      this.#markLost(this.heldLockOf(previous), 'taken', 'this client acquired the lock again');
    }
    this.#locks.set(held.id, lock);
    this.#suspends.watching = true;

    const monitor = options.sessionMonitor;
    if (monitor !== undefined) {
      held.sessionMonitor = { safeTimeWithoutHeartbeat: monitor.safeTimeWithoutHeartbeat, callback: monitor.callback, fired: false };
    }
    this.#keeper.track(held);
    return lock;
  }

  /** Refuses data that would push this lock's item over DynamoDB's item size limit. */
  #checkItemSize(held: HeldLock, data: Uint8Array, released: boolean): void {
    const item = assembleLockItem(this.#table, { ...held, data }, held.additionalAttributes);
    if (released) item[LockAttribute.isReleased] = { S: IS_RELEASED_VALUE };
    validateItemSize(item);
  }

  /** `LockClient.sendHeartbeat`: a manual heartbeat, bounded by what is left of the safe time. */
  async sendHeartbeat(lock: Lock, options: SendHeartbeatOptions = {}): Promise<void> {
    const held = this.heldLockOf(lock);
    if (options.deleteData && options.data !== undefined) {
      throw new InvalidArgumentError('CONFLICTING_OPTIONS', 'sendHeartbeat: pass data or deleteData, not both');
    }
    const leaseDurationMs = options.leaseDuration === undefined ? undefined : checkLockLease(options.leaseDuration, this.#settings);
    const data = toBytes(options.data);
    if (data !== undefined) this.#checkItemSize(held, data, false);
    this.assertStillHeld(held);
    const attempt = deadline(held.safeTimeLeft(this.#clock));
    try {
      await this.#heartbeat(held, { leaseDurationMs, data, deleteData: options.deleteData }, attempt.signal);
    } finally {
      attempt.clear();
    }
  }

  /** `Lock.transactWrite`: the caller's writes, committed only while the lock is held (guarded-write.ts). */
  transactWrite(lock: Lock, items: readonly TransactWriteItem[], options?: GuardedWriteOptions): Promise<void> {
    return guardedWrite(this.#guardedWrites, this.heldLockOf(lock), items, options);
  }

  /** `Lock.guardCondition`: the lock's guard as it stands now, for a transaction the caller sends. */
  guardCondition(lock: Lock): TransactWriteItem {
    const held = this.heldLockOf(lock);
    this.assertStillHeld(held);
    return buildLockGuard(this.#table, held);
  }

  /** One heartbeat write, serialized with the lock's other writes. */
  #heartbeat(held: HeldLock, change: HeartbeatChange, until: AbortSignal): Promise<void> {
    return held.exclusive(async () => {
      this.assertStillHeld(held);
      const newRecordVersionNumber = randomUUID();
      // The lease in force now, at this write's turn: not when it was queued behind one that changed it.
      const decided = { ...change, leaseDurationMs: change.leaseDurationMs ?? held.leaseDurationMs };
      const request = withOldItemOnConditionFailure(
        buildHeartbeatRequest(this.#table, held, { newRecordVersionNumber, refuseReleased: true, ...decided }),
      );
      const write = this.#heartbeatWrite(newRecordVersionNumber, decided);
      try {
        await this.#unlessReleaseStarts(held, sendWrite(this.#dynamoDB, request, until));
      } catch (error) {
        this.#heartbeatNotConfirmed(held, write, error);
        return;
      }
      this.#heartbeatApplied(held, write);
    });
  }

  /**
   * The background heartbeats of several locks in one BatchExecuteStatement
   * call. Each lock's write still waits for its turn among that lock's
   * writes; the call goes out once every lock has its turn (they were idle
   * when the batch was formed, so at once).
   */
  async #heartbeatBatch(helds: readonly HeldLock[], until: AbortSignal): Promise<BatchHeartbeatOutcome[]> {
    let statementsReady!: () => void;
    const allReady = new Promise<void>((resolve) => {
      statementsReady = resolve;
    });
    let send!: (reply: Promise<(StatementFailedError | undefined)[]>) => void;
    const reply = new Promise<(StatementFailedError | undefined)[]>((resolve) => {
      send = resolve;
    });
    const statements: ReturnType<typeof buildHeartbeatStatement>[] = [];
    let waiting = helds.length;
    const turnTaken = (): void => {
      waiting--;
      if (waiting === 0) statementsReady();
    };
    const outcomes = helds.map((held) =>
      held.exclusive(async (): Promise<BatchHeartbeatOutcome> => {
        let write: HeartbeatWrite;
        let index: number;
        try {
          this.assertStillHeld(held);
          write = this.#heartbeatWrite(randomUUID(), { leaseDurationMs: held.leaseDurationMs });
          const statement = buildHeartbeatStatement(this.#table, held, {
            newRecordVersionNumber: write.recordVersionNumber,
            leaseDurationMs: write.leaseDurationMs,
            refuseReleased: true,
          });
          index = statements.push(statement) - 1;
        } catch (error) {
          turnTaken();
          return { error };
        }
        turnTaken();
        try {
          const failure = (await this.#unlessReleaseStarts(held, reply))[index];
          if (failure !== undefined) throw failure;
        } catch (error) {
          if (this.#refusesBatches(error)) {
            // Refused as a whole; but after an SDK retry, an earlier attempt may have been applied.
            if (attemptsOf(error) !== 1) held.rememberUncertain(write);
            return 'unbatchable';
          }
          try {
            this.#heartbeatNotConfirmed(held, write, error);
            return 'confirmed';
          } catch (notConfirmed) {
            return { error: notConfirmed };
          }
        }
        this.#heartbeatApplied(held, write);
        return 'confirmed';
      }),
    );
    await allReady;
    send(statements.length === 0 ? Promise.resolve([]) : sendStatementBatch(this.#dynamoDB, statements, until));
    return Promise.all(outcomes);
  }

  /**
   * Whether an error says that this table cannot take heartbeat batches (no
   * `dynamodb:PartiQLUpdate` permission, or a DynamoDB without PartiQL):
   * batching is then switched off for good, and nothing was applied.
   */
  #refusesBatches(error: unknown): boolean {
    const name = typeof error === 'object' && error !== null ? (error as { name?: unknown }).name : undefined;
    const refused = name === 'AccessDeniedException' || name === 'UnknownOperationException' || isValidationError(error);
    if (refused && this.#batching) {
      this.#batching = false;
      this.#logger?.warn({ err: error }, 'heartbeat batches were refused; sending one UpdateItem per heartbeat from now on');
    }
    return refused;
  }

  /** Waits for a write of the lock, unless a release of it starts meanwhile. */
  async #unlessReleaseStarts<T>(held: HeldLock, sending: Promise<T>): Promise<T> {
    try {
      // A release started meanwhile stops waiting for this write rather than queue behind it. Its
      // outcome is then unknown, as after any cut-off request; the call may carry other locks' writes
      // or a deadline shared with them, so it cannot be aborted for this lock alone.
      return await new Promise<T>((resolve, reject) => {
        held.abortHeartbeat = () => reject(new DOMException('a release of the lock started', 'AbortError'));
        sending.then(resolve, reject);
      });
    } finally {
      held.abortHeartbeat = undefined;
    }
  }

  /** A heartbeat about to be sent: its RVN, its change, and when it left (the lease counts from then). */
  #heartbeatWrite(recordVersionNumber: string, change: HeartbeatChange & { readonly leaseDurationMs: number }): HeartbeatWrite {
    return { ...change, recordVersionNumber, sentAt: this.#clock.now(), sentAtWall: this.#clock.wallNow?.() };
  }

  /**
   * A heartbeat's write did not succeed; sorts it by what it did to the
   * table. Returns when it turns out applied (an SDK retry refused by the
   * write of its own first attempt), or where Java's
   * `holdLockOnServiceUnavailable` keeps the lock; throws otherwise.
   */
  #heartbeatNotConfirmed(held: HeldLock, write: HeartbeatWrite, error: unknown): void {
    const failed = classifyFailedWrite(error, { ownerName: held.ownerName, recordVersionNumbers: [write.recordVersionNumber] });
    switch (failed.outcome) {
      case 'applied':
        this.#heartbeatApplied(held, write);
        return;
      case 'refused':
        throw this.#lostByRefusal(held, 'its heartbeat was refused', failed.item, error);
      case 'unknown':
        // The table may hold this write: its RVN must be accepted, and its lease may be the one in force.
        held.rememberUncertain(write);
        this.#keeper.safeTimeChanged(held);
        break;
      case 'unapplied':
        break;
    }
    if (this.#settings.holdLockOnServiceUnavailable && httpStatusOf(error) === 503) {
      // Java's opt-in: pretend the heartbeat worked although the RVN in the table may not have changed.
      // The safe time of a write of unknown outcome still bounds the lock (a shortened lease).
      held.lookupTime = this.#clock.now();
      held.lookupWallTime = this.#clock.wallNow?.();
      this.#keeper.confirmed(held);
      return;
    }
    throw error;
  }

  #heartbeatApplied(held: HeldLock, write: HeartbeatWrite): void {
    held.confirmWrite(write);
    if (write.deleteData) held.data = undefined;
    else if (write.data !== undefined) held.data = write.data;
    this.#endangered.delete(held);
    this.#keeper.confirmed(held);
  }

  /** A holder's write failed its condition: the item (ALL_OLD) shows what happened to the lock. */
  #lostByRefusal(held: HeldLock, what: string, item: LockItem | undefined, error: unknown): LockLostError {
    let holder: LockHolder | undefined;
    try {
      holder = item === undefined ? undefined : holderOf(decodeLockItem(this.#table, item));
    } catch {
      // An unreadable item still means the lock is not ours.
    }
    const kind: LockLossKind = item === undefined ? 'deleted' : holder?.isReleased ? 'released' : 'taken';
    const reason = { deleted: 'its item was deleted', released: 'its item was marked released', taken: 'another client holds it', expired: '' }[kind];
    // Said even when the lock had ended already (its lease ran out while the write was under way): the
    // refusal is the news of who holds it now.
    const lost = new LockLostError(kind, `${what}: ${reason}`, held, { cause: error, holder });
    this.#endAsLost(held, lost, `${what}: ${reason}`);
    return lost;
  }

  /** Gives the lock up at once if its safe time has passed (even before the expiry task runs); throws unless held. */
  assertStillHeld(held: HeldLock): void {
    this.#expireIfPastSafeTime(held);
    const ended = held.endReason;
    if (ended !== undefined) throw ended;
    if (held.state !== 'held') throw new LockLostError('released', 'it is being released', held);
  }

  #expireIfPastSafeTime(held: HeldLock): void {
    if (held.state === 'held' && held.safeTimeLeft(this.#clock) <= 0) this.#expire(held);
  }

  #expire(held: HeldLock): void {
    this.#markLost(held, 'expired', `no heartbeat was confirmed within its lease of ${held.leaseDurationMs} ms minus the ${held.safetyMarginMs} ms safety margin`);
  }

  /** Ends a held lock as lost: aborts its signal, stops its tasks, and tells listeners. Returns why it ended. */
  #markLost(held: HeldLock, kind: LockLossKind, reason: string, cause?: unknown, holder?: LockHolder): LockLostError {
    const error = new LockLostError(kind, reason, held, { cause, holder });
    return this.#endAsLost(held, error, reason) ? error : (held.endReason ?? error);
  }

  /** The one way a lock ends as lost; false when it had ended already. */
  #endAsLost(held: HeldLock, error: LockLostError, reason: string): boolean {
    const lock = this.#untrack(held);
    if (!held.end('lost', error)) return false;
    this.#logger?.warn({ err: error.cause, partitionKey: held.partitionKey, sortKey: held.sortKey, kind: error.kind }, `lock lost: ${reason}`);
    if (lock !== undefined) this.#events.emit('lost', { lock, error });
    return true;
  }

  /** Drops the lock from the held set and the scheduler; returns its handle. */
  #untrack(held: HeldLock): Lock | undefined {
    const current = this.#locks.get(held.id);
    if (current !== undefined && current === held.handle) this.#locks.delete(held.id);
    this.#suspends.watching = this.#locks.size > 0;
    this.#keeper.untrack(held);
    return held.handle;
  }

  #keeperHooks(): KeeperHooks {
    return {
      heartbeat: (held, until) => this.#heartbeat(held, {}, until),
      heartbeatBatch: (helds, until) => this.#heartbeatBatch(helds, until),
      batchingAvailable: () => this.#batching,
      expire: (held) => this.#expire(held),
      giveUp: (held, reason) => this.#markLost(held, 'expired', reason),
      heartbeatFailed: (held, error, willRetry) => {
        const lock = held.handle;
        // A heartbeat cut short by the lock's own release is no news to anyone.
        if (lock === undefined || error instanceof LockLostError || held.state !== 'held') return;
        this.#logger?.warn({ err: error, partitionKey: held.partitionKey, sortKey: held.sortKey, willRetry }, 'heartbeat failed');
        this.#events.emit('heartbeatError', { lock, error, willRetry });
        if (!this.#endangered.has(held)) {
          this.#endangered.add(held);
          this.#events.emit('endangered', { lock, error, msUntilLost: held.safeTimeLeft(this.#clock) });
        }
      },
      heartbeatConfirmed: (held, lagMs) => {
        if (!this.#events.hasListeners('heartbeat')) return;
        const lock = held.handle;
        if (lock !== undefined) this.#events.emit('heartbeat', { lock, lagMs });
      },
    };
  }

  /** `LockClient.releaseLock`: heartbeats stop first, whatever the outcome. */
  async releaseLock(lock: Lock, options: ReleaseLockOptions = {}): Promise<boolean> {
    const held = this.heldLockOf(lock);
    const deleteLock = options.deleteLock ?? held.deleteLockOnRelease;
    if (deleteLock && options.data !== undefined) {
      throw new InvalidArgumentError('CONFLICTING_OPTIONS', 'releaseLock: data can only be left on a lock released with deleteLock: false');
    }
    const data = toBytes(options.data);
    if (data !== undefined) this.#checkItemSize(held, data, true);
    // As in Java, a lock given up only because its lease ran out locally may still be ours in
    // the table; the conditional release then frees it for others without waiting a lease.
    const lapsed = held.state === 'lost' && held.endReason?.kind === 'expired';
    if (held.state !== 'held' && !lapsed) return false;
    if (!lapsed) held.state = 'releasing';
    this.#untrack(held);
    held.abortHeartbeat?.();
    return held.exclusive(async () => {
      // A kept item gets a new RVN so that no late heartbeat or replayed release can match it.
      const newRecordVersionNumber = deleteLock ? undefined : randomUUID();
      try {
        const request = withOldItemOnConditionFailure(
          buildReleaseRequest(this.#table, held, { deleteLock, data, newRecordVersionNumber, refuseReleased: true }),
        );
        await sendWrite(this.#dynamoDB, request, options.signal);
      } catch (error) {
        const ours = { ownerName: held.ownerName, recordVersionNumbers: newRecordVersionNumber === undefined ? [] : [newRecordVersionNumber] };
        const failed = classifyFailedWrite(error, ours);
        if (failed.outcome === 'refused') {
          this.#lostByRefusal(held, 'its release was refused', failed.item, error);
          return false;
        }
        if (failed.outcome === 'unapplied' && !lapsed) {
          // DynamoDB answered and changed nothing: the lock is still ours.
          if (this.#stopped) {
            // Nothing keeps it alive any more: it lapses after its lease.
            this.#markLost(held, 'expired', 'its release was refused after the client was closed; it lapses after its lease', error);
          } else {
            held.state = 'held';
            this.#locks.set(held.id, lock);
            this.#suspends.watching = true;
            this.#keeper.track(held);
          }
          throw error;
        }
        if (failed.outcome !== 'applied') {
          // Unknown outcome: heartbeats have stopped, so the lock lapses unless the release was applied.
          held.end('lost', new LockLostError('released', 'its release got no answer; it is released or will lapse', held, { cause: error }));
          if (options.bestEffort) {
            this.#logger?.warn({ err: error, partitionKey: held.partitionKey }, 'best-effort release failed; the lock will lapse');
            return false;
          }
          throw error;
        }
        // An SDK retry refused by the release its own first attempt applied.
      }
      if (!held.end('released', new LockLostError('released', 'it was released by this client', held))) held.state = 'released';
      return true;
    });
  }

  /** The record behind a handle of this client's. */
  heldLockOf(lock: Lock): HeldLock {
    const held = lock instanceof Lock ? heldLockBehind(lock, this.#lockOperations) : undefined;
    if (held === undefined) {
      throw new InvalidArgumentError('INVALID_OPTION', 'This lock was not acquired by this client; only the client that acquired a lock can heartbeat or release it');
    }
    return held;
  }
}
