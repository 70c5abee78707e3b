/**
 * The locks one client holds: it starts holding a lock where an acquisition
 * ends ({@link HeldLocks.track}), keeps it through the keeper (which also
 * writes manual heartbeats), writes releases and guarded writes, and hears
 * of every lock's end from the lock itself. It speaks of records (`HeldLock`); the client hands users their
 * `Lock` handles.
 */
import type { DynamoDBClient, TransactWriteItem } from '@aws-sdk/client-dynamodb';
import type { MonotonicClock } from '../base/clock.js';
import { InvalidArgumentError, LockLostError } from '../base/errors.js';
import { TypedEvents, type Subscription } from '../base/events.js';
import { SuspendWatch } from './suspend-watch.js';
import { BEHIND_SHARE_OF_PERIOD, suspendCheckIntervalMs, USUAL_ROUND_TRIP_WINDOW_PERIODS } from './heartbeat-tuning.js';
import type { Logger } from '../base/logger.js';
import { checkLockLease, safetyMarginFor, type ResolvedSettings } from '../settings/options.js';
import { toBytes } from '../primitives/bytes.js';
import {
  IS_RELEASED_VALUE,
  LockAttribute,
  assembleLockItem,
  buildLockGuard,
  handOffHandle,
  validateItemSize,
  type LockHandOff,
  type LockTable,
} from '../protocol/index.js';
import { guardedWrite, type GuardedWriteOptions } from '../hold/guarded-write.js';
import { HeartbeatWriter, type HeartbeatChange } from './heartbeat-writer.js';
import { HeldLock } from '../hold/held-lock.js';
import type { HoldTerms, LockWrite, WonWrite } from '../hold/lock-state.js';
import type { HoldEvents } from './hold-events.js';
import { LockKeeper } from './lock-keeper.js';
import { writeRelease } from '../hold/release-write.js';

export interface HeldLocksOptions {
  readonly dynamoDB: Pick<DynamoDBClient, 'send'>;
  /** What heartbeats are sent through: their own lane (heartbeat-lane.ts). */
  readonly heartbeatDynamoDB: Pick<DynamoDBClient, 'send'>;
  readonly table: LockTable;
  readonly settings: ResolvedSettings;
  readonly clock: MonotonicClock;
  readonly logger: Logger | undefined;
}

/** A heartbeat the user sends (`Lock.sendHeartbeat`). */
export interface ManualHeartbeat {
  /** A new lease for the lock, in ms; none to keep the lease in force. */
  readonly leaseDuration?: number | undefined;
  /** New data (a string is stored as its UTF-8 bytes); none to keep the data. */
  readonly data?: Uint8Array | string | undefined;
  readonly deleteData?: boolean | undefined;
}

/** Releases run this many at a time in {@link HeldLocks.releaseAll}. */
const RELEASE_ALL_CONCURRENCY = 32;

/** What a release writes: `data` only on an item kept (`deleteLock: false`). */
export interface ReleaseRequest {
  readonly deleteLock?: boolean | undefined;
  readonly data?: Uint8Array | undefined;
  readonly bestEffort?: boolean | undefined;
  readonly signal?: AbortSignal | undefined;
}

export class HeldLocks {
  readonly #dynamoDB: Pick<DynamoDBClient, 'send'>;
  readonly #table: LockTable;
  readonly #settings: ResolvedSettings;
  readonly #clock: MonotonicClock;
  readonly #logger: Logger | undefined;
  readonly #writer: HeartbeatWriter;
  readonly #keeper: LockKeeper;
  readonly #events = new TypedEvents<HoldEvents>((error, name) =>
    this.#logger?.error({ err: error, event: name }, 'a lock client event listener threw'),
  );
  /** Held locks by in-process lock id. */
  readonly #locks = new Map<string, HeldLock>();
  /** Ends locks at once after a host suspend, which the scheduler's timers cannot see. */
  readonly #suspends: SuspendWatch;
  readonly #onEnd = (held: HeldLock, announce: boolean): void => this.#ended(held, announce);
  readonly #marginFor = (leaseDurationMs: number): number => safetyMarginFor(leaseDurationMs, this.#settings);

  constructor(options: HeldLocksOptions) {
    this.#dynamoDB = options.dynamoDB;
    this.#table = options.table;
    this.#settings = options.settings;
    this.#clock = options.clock;
    this.#logger = options.logger;
    const settings = this.#settings;
    this.#writer = new HeartbeatWriter({
      dynamoDB: options.heartbeatDynamoDB,
      table: this.#table,
      clock: this.#clock,
      batching: settings.heartbeatBatchSize > 1,
      holdLockOnServiceUnavailable: settings.holdLockOnServiceUnavailable,
      logger: this.#logger,
      stamping: settings.clockBound !== undefined,
      usualRoundTripWindowMs: settings.heartbeatPeriod * USUAL_ROUND_TRIP_WINDOW_PERIODS,
    });
    this.#keeper = new LockKeeper({
      writer: this.#writer,
      events: this.#events,
      clock: this.#clock,
      heartbeatPeriod: settings.heartbeatPeriod,
      heartbeatConcurrency: settings.heartbeatConcurrency,
      heartbeatBatchSize: settings.heartbeatBatchSize,
      backgroundHeartbeats: settings.backgroundHeartbeats,
      logger: this.#logger,
    });
    this.#suspends = new SuspendWatch(this.#clock, suspendCheckIntervalMs(settings.heartbeatPeriod), () => {
      // isHeld() ends a lock found past its safe time.
      for (const held of [...this.#locks.values()]) held.isHeld();
    });
  }

  /** The lock with this in-process id, while this client holds it. */
  get(id: string): HeldLock | undefined {
    return this.#locks.get(id);
  }

  /** Every lock held now. */
  all(): HeldLock[] {
    return [...this.#locks.values()];
  }

  on<Name extends keyof HoldEvents>(name: Name, listener: (event: HoldEvents[Name]) => void): Subscription {
    return this.#events.on(name, listener);
  }

  /**
   * True while a due heartbeat has waited longer than a share of a
   * heartbeat period, either to be sent (for a free slot, a free batch slot
   * or a fuller batch) or, once sent, for its reply beyond the usual round
   * trip (a server busy with the client's other requests): the locks held
   * are falling behind.
   */
  heartbeatsBehind(): boolean {
    const waitedMs = Math.max(this.#keeper.overdueMs(), this.#writer.unansweredLateMs());
    return waitedMs > this.#settings.heartbeatPeriod * BEHIND_SHARE_OF_PERIOD;
  }

  /**
   * True while a due heartbeat has waited longer than that share of a period
   * to be sent at all: every heartbeat slot is busy. Unlike a slow answer
   * (a distant region answers every heartbeat late), this does not last
   * unless the locks held are truly falling behind.
   */
  heartbeatsOverdue(): boolean {
    return this.#keeper.overdueMs() > this.#settings.heartbeatPeriod * BEHIND_SHARE_OF_PERIOD;
  }

  /**
   * Stops every heartbeat and check. A lock still held then can no longer be
   * kept: it ends as lost at once (its signal aborts, `lost` is told), and
   * its item lapses after its lease.
   */
  stop(): void {
    for (const held of [...this.#locks.values()]) held.lose('expired', 'the client was closed without releasing it; it lapses after its lease');
    this.#suspends.stop();
    this.#keeper.close();
  }

  /** Starts holding a lock just acquired, as its winning write left it: its heartbeats, its expiry. */
  track(won: WonWrite, terms: HoldTerms): HeldLock {
    const { record } = won;
    const monitor = terms.sessionMonitor;
    const held = new HeldLock({
      key: record,
      ownerName: record.ownerName,
      recordVersionNumber: record.recordVersionNumber,
      leaseDurationMs: record.leaseDurationMs,
      lookupTime: won.lookupTime,
      lookupWallTime: won.lookupWallTime,
      data: record.data,
      additionalAttributes: won.additionalAttributes,
      deleteLockOnRelease: terms.deleteLockOnRelease,
      fencingToken: won.fencingToken,
      leaseEnd: terms.leaseEnd,
      sessionMonitor: monitor && { safeTimeWithoutHeartbeat: monitor.safeTimeWithoutHeartbeat, callback: monitor.callback },
      clock: this.#clock,
      marginFor: this.#marginFor,
      onEnd: this.#onEnd,
    });
    // A renewal whose outcome is unknown: the table may hold its RVN instead.
    if (won.inDoubt !== undefined) held.rememberUncertain(writeOf(won.inDoubt));
    // This client took over its own earlier, lapsed hold of the same lock.
    this.#locks.get(held.id)?.lose('taken', 'this client acquired the lock again');
    this.#locks.set(held.id, held);
    this.#suspends.watching = true;
    this.#keeper.track(held);
    return held;
  }

  /** Every end of a held lock comes here, from the lock itself. */
  #ended(held: HeldLock, announce: boolean): void {
    this.#untrack(held);
    if (!announce) return;
    const error = held.endReason as LockLostError;
    this.#logger?.warn(
      { event: 'lost', err: error.cause, partitionKey: held.partitionKey, sortKey: held.sortKey, kind: error.kind },
      `lock lost: ${error.message}`,
    );
    this.#events.emit('lost', { held, error });
  }

  /** Drops the lock from the held set and the scheduler. */
  #untrack(held: HeldLock): void {
    if (this.#locks.get(held.id) === held) this.#locks.delete(held.id);
    this.#suspends.watching = this.#locks.size > 0;
    this.#keeper.untrack(held);
  }

  /** Refuses data that would push this lock's item over DynamoDB's item size limit. */
  #checkItemSize(held: HeldLock, data: Uint8Array, released: boolean): void {
    const { partitionKey, sortKey, ownerName, leaseDurationMs, recordVersionNumber } = held;
    const item = assembleLockItem(
      this.#table,
      { partitionKey, sortKey, ownerName, leaseDurationMs, recordVersionNumber, data },
      held.additionalAttributes,
    );
    if (released) item[LockAttribute.isReleased] = { S: IS_RELEASED_VALUE };
    validateItemSize(item);
  }

  /** A manual heartbeat: its arguments checked here, written by the keeper. */
  async sendHeartbeat(held: HeldLock, heartbeat: ManualHeartbeat): Promise<void> {
    if (heartbeat.deleteData === true && heartbeat.data !== undefined) {
      throw new InvalidArgumentError('CONFLICTING_OPTIONS', 'sendHeartbeat: pass data or deleteData, not both');
    }
    const leaseDurationMs = heartbeat.leaseDuration === undefined ? undefined : checkLockLease(heartbeat.leaseDuration, this.#settings);
    const data = toBytes(heartbeat.data);
    if (data !== undefined) this.#checkItemSize(held, data, false);
    const change: HeartbeatChange = { leaseDurationMs, data, deleteData: heartbeat.deleteData };
    held.throwUnlessHeld();
    await this.#keeper.sendHeartbeat(held, change);
  }

  /** The caller's writes, committed only while the lock is held (guarded-write.ts). */
  transactWrite(held: HeldLock, items: readonly TransactWriteItem[], options?: GuardedWriteOptions): Promise<void> {
    return guardedWrite({ dynamoDB: this.#dynamoDB, table: this.#table }, held, items, options);
  }

  /** The lock's guard as it stands now, for a transaction the caller sends. */
  guardCondition(held: HeldLock): TransactWriteItem {
    held.throwUnlessHeld();
    return buildLockGuard(this.#table, held);
  }

  /** Releases the lock: heartbeats stop first, whatever the outcome. */
  async releaseLock(held: HeldLock, request: ReleaseRequest): Promise<boolean> {
    const deleteLock = request.deleteLock ?? held.deleteLockOnRelease;
    if (deleteLock && request.data !== undefined) {
      throw new InvalidArgumentError('CONFLICTING_OPTIONS', 'releaseLock: data can only be left on a lock released with deleteLock: false');
    }
    if (request.data !== undefined) this.#checkItemSize(held, request.data, true);
    // As in Java, a lock given up only because its lease ran out locally may still be ours in
    // the table; the conditional release then frees it for others without waiting a lease.
    if (!held.beginRelease()) return false;
    this.#untrack(held);
    return held.queueWrite(async () => {
      const result = await writeRelease(this.#dynamoDB, this.#table, held, { deleteLock, data: request.data, signal: request.signal });
      switch (result.outcome) {
        case 'released':
          held.released();
          this.#events.emit('released', { held });
          return true;
        case 'refused':
          return false;
        case 'unapplied':
          // Nothing changed: the item is still ours, to release again; the signal aborted when this release began.
          held.releaseUnconfirmed(result.error, 'unapplied');
          break;
        case 'unknown':
          // Heartbeats have stopped, so the lock lapses unless the release was applied.
          held.releaseUnconfirmed(result.error, 'unknown');
          break;
      }
      if (request.bestEffort === true) {
        this.#logger?.warn({ err: result.error, partitionKey: held.partitionKey }, 'best-effort release failed; the lock will lapse');
        return false;
      }
      throw result.error;
    });
  }

  /**
   * Hands the lock off: this client stops keeping it at once (heartbeats, checks; its signal aborts), then waits for
   * its writes under way to settle, so that the handle names every RVN the table may hold. A write refused
   * meanwhile ends it as lost instead, and that is thrown.
   */
  async handOff(held: HeldLock): Promise<LockHandOff> {
    held.throwUnlessHeld();
    held.beginHandOff();
    this.#untrack(held);
    // Queued behind every write under way: each has confirmed its RVN, or added it to those in doubt, by then.
    await held.queueWrite(() => Promise.resolve());
    held.handedOff();
    const lost = held.state === 'lost' ? held.endReason : undefined;
    if (lost !== undefined) throw lost;
    return handOffHandle(this.#table, held);
  }

  /**
   * Releases every lock held now, a bounded number at a time, each attempted
   * once within `signal`. Resolves with the failures.
   */
  async releaseAll(signal: AbortSignal): Promise<unknown[]> {
    const failures: unknown[] = [];
    const locks = this.all();
    for (let i = 0; i < locks.length; i += RELEASE_ALL_CONCURRENCY) {
      const results = await Promise.allSettled(locks.slice(i, i + RELEASE_ALL_CONCURRENCY).map((held) => this.releaseLock(held, { signal })));
      for (const result of results) if (result.status === 'rejected') failures.push(result.reason);
    }
    return failures;
  }
}

/** A won write as the held lock counts its writes. */
function writeOf(won: WonWrite): LockWrite {
  const { record, lookupTime, lookupWallTime } = won;
  return {
    recordVersionNumber: record.recordVersionNumber,
    leaseDurationMs: record.leaseDurationMs,
    sentAt: lookupTime,
    sentAtWall: lookupWallTime,
  };
}
