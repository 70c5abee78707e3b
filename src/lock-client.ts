/**
 * `LockClient`: acquire, hold, release and inspect locks in a DynamoDB table
 * shared with the Java `AmazonDynamoDBLockClient`.
 */
import { DynamoDBClient, QueryCommand, ScanCommand, type QueryCommandInput, type ScanCommandInput } from '@aws-sdk/client-dynamodb';
import { randomUUID } from 'node:crypto';
import type { Logger } from 'pino';
import { acquire, validateAcquireOptions, type AcquireContext, type AcquireLockOptions, type Acquisition } from './acquire-lock.js';
import { KeySchemaProof } from './acquire/key-schema-proof.js';
import { LockPollers } from './acquire/lock-poller.js';
import { toBytes } from './bytes.js';
import { deadline } from './deadline.js';
import { childAbortController, type ChildAbortController } from './child-abort-controller.js';
import { systemClock, type MonotonicClock } from './clock.js';
import {
  httpStatusOf,
  isConditionalCheckFailed,
  itemOfFailedCondition,
  wasNeverSent,
  wasRefusedUnapplied,
} from './dynamodb-errors.js';
import {
  InvalidArgumentError,
  LockClientCloseError,
  LockClientClosedError,
  LockCurrentlyUnavailableError,
  LockLostError,
  LockNotGrantedError,
  LockTableDoesNotExistError,
  LockTableSchemaMismatchError,
  type LockHolder,
  type LockLossKind,
} from './errors.js';
import { TypedEvents, type Subscription } from './events.js';
import { LockKeeper, type KeeperHooks } from './heartbeat/lock-keeper.js';
import { HeartbeatScheduler } from './heartbeat/scheduler.js';
import { HeldLock, lockId } from './held-lock.js';
import { Lock, LockSnapshot, type LockOperations, type ReleaseLockOptions, type SendHeartbeatOptions } from './lock.js';
import {
  assertLockTableExists,
  createLockTable,
  explainTableError,
  lockTableExists,
  type CreateLockTableOptions,
} from './lock-table.js';
import { LockObservationCache } from './observation-cache.js';
import {
  checkDuration,
  checkLockLease,
  resolveSettings,
  safetyMarginFor,
  type LockClientOptions,
  type ResolvedSettings,
} from './options.js';
import {
  IS_RELEASED_VALUE,
  LockAttribute,
  assembleLockItem,
  buildHeartbeatRequest,
  buildQueryRequest,
  buildReleaseRequest,
  buildScanRequest,
  decodeLockItem,
  validateItemSize,
  validateLockKey,
  withOldItemOnConditionFailure,
  type LockItem,
  type LockKey,
  type LockTable,
} from './protocol/index.js';
import { holderOf } from './lock-holder.js';
import { readLock } from './read-lock.js';
import { sendWrite } from './send-write.js';

export interface LockKeyOptions {
  /** The sort key value; required exactly when the table has a sort key. */
  readonly sortKey?: string;
}

export interface ListLocksOptions {
  /** Read with strong consistency (Java lists eventually consistently). @default true */
  readonly consistentRead?: boolean;
  readonly signal?: AbortSignal;
}

/** What {@link LockClient.on} reports. */
export interface LockClientEvents {
  /**
   * A held lock was lost: taken over, deleted, marked released by someone
   * else, or not renewed within its lease minus the safety margin. Fires once
   * per lock, at the moment its `signal` aborts. Not for locks this client
   * released itself.
   */
  lost: { readonly lock: Lock; readonly error: LockLostError };
  /**
   * A background heartbeat failed and the lock is still held: the first
   * failure since the last confirmed heartbeat. `msUntilLost` is what is left
   * of the lease before the lock is given up. Fires again only after a
   * heartbeat was confirmed in between.
   */
  endangered: { readonly lock: Lock; readonly error: unknown; readonly msUntilLost: number };
  /**
   * Every failed background heartbeat attempt, retried or not. A refused
   * heartbeat (the lock is gone) is reported by `lost` instead.
   */
  heartbeatError: { readonly lock: Lock; readonly error: unknown; readonly willRetry: boolean };
  /** Every confirmed background heartbeat; `lagMs` is how late it started after it was due. */
  heartbeat: { readonly lock: Lock; readonly lagMs: number };
}

export interface WithLockOptions extends AcquireLockOptions, LockKeyOptions {
  /** Milliseconds the release after the routine may take; it is not retried. @default 5000 */
  readonly releaseTimeout?: number;
}

const WITH_LOCK_RELEASE_TIMEOUT_MS = 5_000;

export interface CloseOptions {
  /**
   * Milliseconds the releases of `close()` may take; locks still unreleased
   * then lapse after their lease. @default the client's `leaseDuration`, after
   * which they would have lapsed anyway
   */
  readonly timeout?: number;
}

/** Releases run this many at a time in `close()`. */
const CLOSE_CONCURRENCY = 32;

export class LockClient implements AsyncDisposable {
  /** This client's identity in the lock table. */
  readonly ownerName: string;
  readonly tableName: string;
  readonly #settings: ResolvedSettings;
  readonly #table: LockTable;
  readonly #dynamoDB: Pick<DynamoDBClient, 'send'>;
  readonly #ownedClient: DynamoDBClient | undefined;
  readonly #clock: MonotonicClock;
  readonly #logger: Logger | undefined;
  readonly #scheduler: HeartbeatScheduler;
  readonly #keeper: LockKeeper;
  readonly #events = new TypedEvents<LockClientEvents>((error, name) =>
    this.#logger?.error({ err: error, event: name }, 'a lock client event listener threw'),
  );
  /** The handle of each held lock, for events. */
  readonly #lockOf = new WeakMap<HeldLock, Lock>();
  readonly #observations: LockObservationCache;
  readonly #acquireContext: AcquireContext;
  readonly #lockOperations: LockOperations;
  /** Held locks by in-process lock id, and the client record behind each handle. */
  readonly #locks = new Map<string, Lock>();
  readonly #heldOf = new WeakMap<Lock, HeldLock>();
  /** Aborted by `close()` so that waiting acquisitions end at once. */
  readonly #lifetime = new AbortController();
  /** Acquisitions under way; `close()` aborts them and waits for them to settle. */
  readonly #acquiring = new Map<ChildAbortController, Promise<unknown>>();
  #closing: Promise<void> | undefined;
  /** Listing checks the table's key schema once per client. */
  #listingSchemaCheck: Promise<void> | undefined;

  constructor(options: LockClientOptions) {
    this.#settings = resolveSettings(options);
    const { tableName, partitionKeyName, sortKeyName, ownerName } = this.#settings;
    this.ownerName = ownerName;
    this.tableName = tableName;
    this.#table = { tableName, partitionKeyName, sortKeyName };
    if (options.dynamoDB !== undefined) {
      this.#dynamoDB = options.dynamoDB;
    } else if (options.dynamoDBConfig !== undefined) {
      this.#ownedClient = new DynamoDBClient(options.dynamoDBConfig);
      this.#dynamoDB = this.#ownedClient;
    } else {
      throw new InvalidArgumentError('INVALID_OPTION', 'Pass either dynamoDB (a DynamoDBClient) or dynamoDBConfig');
    }
    this.#clock = options.clock ?? systemClock;
    this.#logger = options.logger?.child({ lockTable: tableName, ownerName });
    if (!this.#settings.backgroundHeartbeats && this.#settings.leaseDuration < 2 * this.#settings.heartbeatPeriod) {
      this.#logger?.warn('leaseDuration is less than twice heartbeatPeriod; heartbeat manually well within each lease');
    }
    this.#scheduler = new HeartbeatScheduler({
      clock: this.#clock,
      concurrency: this.#settings.heartbeatConcurrency,
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
    this.#observations = new LockObservationCache(this.#settings.maxLockObservationCacheSize, this.#clock);
    this.#acquireContext = {
      dynamoDB: this.#dynamoDB,
      table: this.#table,
      ownerName,
      defaultLeaseDuration: this.#settings.leaseDuration,
      heartbeatPeriod: this.#settings.heartbeatPeriod,
      backgroundHeartbeats: this.#settings.backgroundHeartbeats,
      safetyMargin: this.#settings.safetyMargin,
      clock: this.#clock,
      observations: this.#observations,
      pollers: new LockPollers({ clock: this.#clock, read: (key, signal) => readLock(this.#dynamoDB, this.#table, key, this.#clock, signal) }),
      keySchema: new KeySchemaProof(this.#table),
      logger: this.#logger,
      explain: (error) => explainTableError(this.#dynamoDB, this.#table, error),
    };
    this.#lockOperations = {
      clock: this.#clock,
      releaseLock: (lock, releaseOptions) => this.releaseLock(lock, releaseOptions),
      sendHeartbeat: (lock, heartbeatOptions) => this.sendHeartbeat(lock, heartbeatOptions),
      assertHeld: (lock) => this.#assertStillHeld(this.#heldLockOf(lock)),
    };
  }

  // ── Acquiring ────────────────────────────────────────────────────────────

  /**
   * Acquires the lock on `partitionKey`, waiting while another client holds
   * it: up to that holder's lease plus `additionalTimeToWaitForLock`.
   *
   * @throws LockNotGrantedError when the lock stayed held until the deadline.
   * @throws LockCurrentlyUnavailableError with `shouldSkipBlockingWait` while someone else holds it.
   */
  async acquireLock(partitionKey: string, options: AcquireLockOptions & LockKeyOptions = {}): Promise<Lock> {
    this.#assertOpen();
    const key: LockKey = { partitionKey, sortKey: options.sortKey };
    validateAcquireOptions(this.#acquireContext, key, options);
    if (options.reentrant) {
      const mine = this.#locks.get(lockId(key));
      if (mine !== undefined && !mine.isExpired()) return mine;
    }
    const call = childAbortController(options.signal);
    const acquiring = this.#acquireAndTrack(key, options, call);
    this.#acquiring.set(call, acquiring);
    try {
      return await acquiring;
    } finally {
      this.#acquiring.delete(call);
      call.dispose();
    }
  }

  async #acquireAndTrack(key: LockKey, options: AcquireLockOptions, call: ChildAbortController): Promise<Lock> {
    let acquisition: Acquisition;
    try {
      acquisition = await acquire(this.#acquireContext, key, { ...options, signal: call.signal });
    } catch (error) {
      throw this.#lifetime.signal.aborted ? new LockClientClosedError() : error;
    }
    const lock = this.#track(acquisition, options);
    if (call.signal.aborted || this.#lifetime.signal.aborted) {
      // The caller gave up (or the client closed) while the winning write was in flight: do not leave the lock held.
      await this.releaseLock(lock, { bestEffort: true }).catch(() => undefined);
      throw this.#lifetime.signal.aborted ? new LockClientClosedError() : call.signal.reason;
    }
    return lock;
  }

  /** Like {@link acquireLock}, but resolves to `undefined` where that would throw `LockNotGrantedError` or `LockCurrentlyUnavailableError`. */
  async tryAcquireLock(partitionKey: string, options: AcquireLockOptions & LockKeyOptions = {}): Promise<Lock | undefined> {
    try {
      return await this.acquireLock(partitionKey, options);
    } catch (error) {
      if (error instanceof LockNotGrantedError || error instanceof LockCurrentlyUnavailableError) return undefined;
      throw error;
    }
  }

  #track(acquisition: Acquisition, options: AcquireLockOptions): Lock {
    const { record, lookupTime } = acquisition;
    const held = new HeldLock({
      key: record,
      ownerName: record.ownerName,
      recordVersionNumber: record.recordVersionNumber,
      leaseDurationMs: record.leaseDurationMs,
      lookupTime,
      data: record.data,
      additionalAttributes: acquisition.additionalAttributes,
      deleteLockOnRelease: options.deleteLockOnRelease ?? true,
      safetyMarginMs: safetyMarginFor(record.leaseDurationMs, this.#settings),
    });
    const lock = new Lock(held, this.#lockOperations);
    this.#heldOf.set(lock, held);
    this.#lockOf.set(held, lock);

    const previous = this.#locks.get(held.id);
    if (previous !== undefined) {
      // This client took over its own earlier, lapsed hold of the same lock.
      this.#markLost(this.#heldOf.get(previous) as HeldLock, 'taken', 'this client acquired the lock again');
    }
    this.#locks.set(held.id, lock);

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

  // ── Holding ──────────────────────────────────────────────────────────────

  /**
   * Renews the lease of a lock this client holds (a new RVN, conditioned on
   * the last one). Background heartbeats do this for you.
   *
   * @throws LockLostError when the lock is no longer held; it is then dropped.
   */
  async sendHeartbeat(lock: Lock, options: SendHeartbeatOptions = {}): Promise<void> {
    const held = this.#heldLockOf(lock);
    if (options.deleteData && options.data !== undefined) {
      throw new InvalidArgumentError('CONFLICTING_OPTIONS', 'sendHeartbeat: pass data or deleteData, not both');
    }
    const leaseDurationMs =
      options.leaseDuration === undefined ? held.leaseDurationMs : checkLockLease(options.leaseDuration, this.#settings);
    const data = toBytes(options.data);
    if (data !== undefined) this.#checkItemSize(held, data, false);
    this.#assertStillHeld(held);
    const attempt = deadline(held.safeUntil() - this.#clock.now());
    try {
      await this.#heartbeat(held, { leaseDurationMs, data, deleteData: options.deleteData }, attempt.signal);
    } finally {
      attempt.clear();
    }
  }

  /** One heartbeat write, serialized with the lock's other writes. */
  #heartbeat(
    held: HeldLock,
    change: { leaseDurationMs: number; data?: Uint8Array | undefined; deleteData?: boolean | undefined },
    until: AbortSignal,
  ): Promise<void> {
    return held.exclusive(async () => {
      this.#assertStillHeld(held);
      const newRecordVersionNumber = randomUUID();
      const request = withOldItemOnConditionFailure(
        buildHeartbeatRequest(this.#table, held, { newRecordVersionNumber, refuseReleased: true, ...change }),
      );
      const sentAt = this.#clock.now();
      const sending = sendWrite(this.#dynamoDB, request, until);
      try {
        // A release started meanwhile stops waiting for this write rather than queue behind it. Its
        // outcome is then unknown, as after any cut-off request; `until` may be shared with other
        // locks' heartbeats, so this one cannot be aborted on its own.
        await new Promise<void>((resolve, reject) => {
          held.abortHeartbeat = () => reject(new DOMException('a release of the lock started', 'AbortError'));
          sending.then(resolve, reject);
        });
      } catch (error) {
        if (isConditionalCheckFailed(error)) throw this.#lostByRefusal(held, 'its heartbeat was refused', error);
        if (!wasRefusedUnapplied(error) && !wasNeverSent(error)) {
          // No answer, a 5xx, or cut off: the write may have been applied, so its RVN may now be the lock's.
          held.rememberUncertain(newRecordVersionNumber);
        }
        if (this.#settings.holdLockOnServiceUnavailable && httpStatusOf(error) === 503) {
          // Java's opt-in: pretend the heartbeat worked although the RVN in the table may not have changed.
          held.lookupTime = this.#clock.now();
          this.#keeper.confirmed(held);
          return;
        }
        throw error;
      } finally {
        held.abortHeartbeat = undefined;
      }
      held.recordVersionNumber = newRecordVersionNumber;
      if (held.uncertainRecordVersionNumbers.length > 0) held.uncertainRecordVersionNumbers = [];
      held.lookupTime = sentAt;
      held.leaseDurationMs = change.leaseDurationMs;
      if (change.deleteData) held.data = undefined;
      else if (change.data !== undefined) held.data = change.data;
      this.#endangered.delete(held);
      this.#keeper.confirmed(held);
    });
  }

  /** A holder's write failed its condition: the item shows what happened to the lock. */
  #lostByRefusal(held: HeldLock, what: string, error: unknown): LockLostError {
    const item = itemOfFailedCondition(error);
    let holder: LockHolder | undefined;
    try {
      holder = item === undefined ? undefined : holderOf(decodeLockItem(this.#table, item));
    } catch {
      // An unreadable item still means the lock is not ours.
    }
    const kind: LockLossKind = item === undefined ? 'deleted' : holder?.isReleased ? 'released' : 'taken';
    const reason = { deleted: 'its item was deleted', released: 'its item was marked released', taken: 'another client holds it', expired: '' }[kind];
    return this.#markLost(held, kind, `${what}: ${reason}`, error, holder);
  }

  /** Gives the lock up at once if its safe time has passed (even before the expiry task runs); throws unless held. */
  #assertStillHeld(held: HeldLock): void {
    if (held.state === 'held' && this.#clock.now() >= held.safeUntil()) this.#expire(held);
    const ended = held.endReason;
    if (ended !== undefined) throw ended;
    if (held.state !== 'held') throw new LockLostError('released', 'it is being released', held);
  }

  #expire(held: HeldLock): void {
    this.#markLost(held, 'expired', `no heartbeat was confirmed within its lease of ${held.leaseDurationMs} ms minus the ${held.safetyMarginMs} ms safety margin`);
  }

  /** Ends a held lock as lost: aborts its signal, stops its tasks, and tells listeners. */
  #markLost(held: HeldLock, kind: LockLossKind, reason: string, cause?: unknown, holder?: LockHolder): LockLostError {
    const error = new LockLostError(kind, reason, held, { cause, holder });
    const lock = this.#untrack(held);
    if (!held.end('lost', error)) return held.endReason ?? error;
    this.#logger?.warn({ err: cause, partitionKey: held.partitionKey, sortKey: held.sortKey, kind }, `lock lost: ${reason}`);
    if (lock !== undefined) this.#events.emit('lost', { lock, error });
    return error;
  }

  /** Drops the lock from the held set and the scheduler; returns its handle. */
  #untrack(held: HeldLock): Lock | undefined {
    const current = this.#locks.get(held.id);
    const mine = current !== undefined && this.#heldOf.get(current) === held;
    if (mine) this.#locks.delete(held.id);
    this.#keeper.untrack(held);
    return mine ? current : this.#handleOf(held);
  }

  #handleOf(held: HeldLock): Lock | undefined {
    return this.#lockOf.get(held);
  }

  /** Background heartbeats failed since the last confirmed one; `endangered` fires once per such episode. */
  readonly #endangered = new WeakSet<HeldLock>();

  #keeperHooks(): KeeperHooks {
    return {
      heartbeat: (held, until) => this.#heartbeat(held, { leaseDurationMs: held.leaseDurationMs }, until),
      expire: (held) => this.#expire(held),
      giveUp: (held, reason) => this.#markLost(held, 'expired', reason),
      heartbeatFailed: (held, error, willRetry) => {
        const lock = this.#handleOf(held);
        // A heartbeat cut short by the lock's own release is no news to anyone.
        if (lock === undefined || error instanceof LockLostError || held.state !== 'held') return;
        this.#logger?.warn({ err: error, partitionKey: held.partitionKey, sortKey: held.sortKey, willRetry }, 'heartbeat failed');
        this.#events.emit('heartbeatError', { lock, error, willRetry });
        if (!this.#endangered.has(held)) {
          this.#endangered.add(held);
          this.#events.emit('endangered', { lock, error, msUntilLost: held.safeUntil() - this.#clock.now() });
        }
      },
      heartbeatConfirmed: (held, lagMs) => {
        const lock = this.#handleOf(held);
        if (lock !== undefined) this.#events.emit('heartbeat', { lock, lagMs });
      },
    };
  }

  /**
   * Subscribes to what happens to this client's locks; see {@link LockClientEvents}.
   * @returns a subscription whose `dispose()` unsubscribes.
   */
  on<Name extends keyof LockClientEvents>(name: Name, listener: (event: LockClientEvents[Name]) => void): Subscription {
    return this.#events.on(name, listener);
  }

  /**
   * Acquires the lock, runs `routine(signal, lock)`, and always releases the
   * lock afterwards. `signal` aborts (with a {@link LockLostError}) the moment
   * the lock can no longer be trusted, or when `options.signal` aborts; check
   * `lock.throwIfLost()` right before each effect that needs the lock.
   *
   * The release is one attempt bounded by `releaseTimeout`; if it fails, the
   * lock lapses after its lease. Resolves with the routine's result.
   */
  async withLock<T>(
    partitionKey: string,
    routine: (signal: AbortSignal, lock: Lock) => Promise<T> | T,
    options: WithLockOptions = {},
  ): Promise<T> {
    const releaseTimeout = checkDuration('releaseTimeout', options.releaseTimeout ?? WITH_LOCK_RELEASE_TIMEOUT_MS, { min: 1 });
    const lock = await this.acquireLock(partitionKey, options);
    const scope = childAbortController(lock.signal);
    const onCallerAbort = (): void => scope.abort(options.signal?.reason);
    options.signal?.addEventListener('abort', onCallerAbort, { once: true });
    try {
      return await routine(scope.signal, lock);
    } finally {
      options.signal?.removeEventListener('abort', onCallerAbort);
      scope.dispose();
      const bound = deadline(releaseTimeout);
      await this.releaseLock(lock, { signal: bound.signal })
        .catch((error: unknown) => {
          this.#logger?.warn({ err: error, partitionKey }, 'withLock: release failed; the lock will lapse after its lease');
        })
        .finally(() => bound.clear());
    }
  }

  // ── Releasing ────────────────────────────────────────────────────────────

  /**
   * Releases a lock this client holds: deletes its item, or marks it released
   * (`deleteLock: false`). Heartbeats stop first, whatever the outcome.
   *
   * @returns true when DynamoDB confirmed the release; false when the lock was
   *   no longer this client's (taken over, deleted, already released).
   */
  async releaseLock(lock: Lock, options: ReleaseLockOptions = {}): Promise<boolean> {
    const held = this.#heldLockOf(lock);
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
      try {
        const request = withOldItemOnConditionFailure(
          buildReleaseRequest(this.#table, held, {
            deleteLock,
            data,
            // A kept item gets a new RVN so that no late heartbeat or replayed release can match it.
            newRecordVersionNumber: deleteLock ? undefined : randomUUID(),
            refuseReleased: true,
          }),
        );
        await sendWrite(this.#dynamoDB, request, options.signal);
        if (!held.end('released', new LockLostError('released', 'it was released by this client', held))) held.state = 'released';
        return true;
      } catch (error) {
        if (isConditionalCheckFailed(error)) {
          this.#lostByRefusal(held, 'its release was refused', error);
          return false;
        }
        if (wasRefusedUnapplied(error) && !lapsed) {
          // DynamoDB answered and changed nothing: the lock is still ours, so keep it alive.
          held.state = 'held';
          this.#locks.set(held.id, lock);
          this.#keeper.track(held);
          throw error;
        }
        // Unknown outcome: heartbeats have stopped, so the lock lapses unless the release was applied.
        held.end('lost', new LockLostError('released', 'its release got no answer; it is released or will lapse', held, { cause: error }));
        if (options.bestEffort) {
          this.#logger?.warn({ err: error, partitionKey: held.partitionKey }, 'best-effort release failed; the lock will lapse');
          return false;
        }
        throw error;
      }
    });
  }

  // ── Reading ──────────────────────────────────────────────────────────────

  /**
   * The lock on this key: this client's {@link Lock} if it holds it, else a
   * read-only {@link LockSnapshot} of the current holder, else `undefined`
   * (no item, or a released one).
   */
  async getLock(partitionKey: string, options: LockKeyOptions & { signal?: AbortSignal } = {}): Promise<Lock | LockSnapshot | undefined> {
    this.#assertOpen();
    const key: LockKey = { partitionKey, sortKey: options.sortKey };
    validateLockKey(this.#table, key);
    const mine = this.#locks.get(lockId(key));
    if (mine !== undefined) return mine;
    const snapshot = await this.#readSnapshot(key, options.signal);
    return snapshot === undefined || snapshot.isReleased ? undefined : snapshot;
  }

  async #readSnapshot(key: LockKey, signal?: AbortSignal): Promise<LockSnapshot | undefined> {
    try {
      const sighting = await readLock(this.#dynamoDB, this.#table, key, this.#clock, signal);
      return sighting === undefined ? undefined : new LockSnapshot(sighting.record, sighting.lookupTime);
    } catch (error) {
      throw await explainTableError(this.#dynamoDB, this.#table, error);
    }
  }

  /** True while this client holds the lock and its lease has not run out locally. No DynamoDB call. */
  hasLock(partitionKey: string, options: LockKeyOptions = {}): boolean {
    const lock = this.#locks.get(lockId({ partitionKey, sortKey: options.sortKey }));
    return lock !== undefined && !lock.isExpired();
  }

  /** Every lock in the table, released ones included, page by page (Scan). */
  getAllLocks(options: ListLocksOptions = {}): AsyncIterable<LockSnapshot> {
    const consistentRead = options.consistentRead ?? true;
    return this.#list(
      (exclusiveStartKey) => buildScanRequest(this.#table, { exclusiveStartKey, consistentRead }),
      (input) => this.#dynamoDB.send(new ScanCommand(input), { abortSignal: options.signal }),
    );
  }

  /** Every lock sharing `partitionKey` (one per sort key), released ones included (Query). */
  getLocksByPartitionKey(partitionKey: string, options: ListLocksOptions = {}): AsyncIterable<LockSnapshot> {
    const consistentRead = options.consistentRead ?? true;
    return this.#list(
      (exclusiveStartKey) => buildQueryRequest(this.#table, partitionKey, { exclusiveStartKey, consistentRead }),
      (input) => this.#dynamoDB.send(new QueryCommand(input as QueryCommandInput), { abortSignal: options.signal }),
    );
  }

  async *#list<I extends ScanCommandInput | QueryCommandInput>(
    build: (exclusiveStartKey: LockItem | undefined) => I,
    send: (input: I) => Promise<{ Items?: LockItem[]; LastEvaluatedKey?: LockItem }>,
  ): AsyncGenerator<LockSnapshot> {
    this.#assertOpen();
    let input = build(undefined); // validates the arguments before any call
    this.#listingSchemaCheck ??= this.#checkSchemaForListing();
    await this.#listingSchemaCheck;
    for (;;) {
      let page: { Items?: LockItem[]; LastEvaluatedKey?: LockItem };
      try {
        page = await send(input);
      } catch (error) {
        throw await explainTableError(this.#dynamoDB, this.#table, error);
      }
      const observedAt = this.#clock.now();
      for (const item of page.Items ?? []) yield new LockSnapshot(decodeLockItem(this.#table, item), observedAt);
      const next = page.LastEvaluatedKey;
      if (next === undefined || Object.keys(next).length === 0) return;
      input = build(next);
    }
  }

  /**
   * A Scan or Query through the wrong key names decodes without error (the
   * sort key lands among the additional attributes), so listings check the
   * key schema first. Without DescribeTable permission the check is skipped.
   */
  async #checkSchemaForListing(): Promise<void> {
    try {
      await this.assertLockTableExists();
    } catch (error) {
      const definite =
        error instanceof LockTableSchemaMismatchError || (error instanceof LockTableDoesNotExistError && error.cause === undefined);
      if (!definite) {
        this.#logger?.debug({ err: error }, 'could not check the lock table key schema before listing');
        return;
      }
      this.#listingSchemaCheck = undefined; // the table may be fixed or created later
      throw error;
    }
  }

  // ── The table ────────────────────────────────────────────────────────────

  /** True when the table exists and is ACTIVE or UPDATING. */
  lockTableExists(options: { signal?: AbortSignal } = {}): Promise<boolean> {
    return lockTableExists(this.#dynamoDB, this.#table, options.signal);
  }

  /**
   * @throws LockTableDoesNotExistError when the table is missing or not usable.
   * @throws LockTableSchemaMismatchError when its keys differ from this client's options.
   */
  assertLockTableExists(options: { signal?: AbortSignal } = {}): Promise<void> {
    return assertLockTableExists(this.#dynamoDB, this.#table, options.signal);
  }

  /** Creates the lock table for this client's key names (on-demand by default) and waits until it is ACTIVE. */
  createLockTable(options: CreateLockTableOptions = {}): Promise<void> {
    return createLockTable(this.#dynamoDB, this.#table, options);
  }

  // ── Lifecycle ────────────────────────────────────────────────────────────

  /**
   * Releases every held lock (all attempted, failures collected), stops the
   * scheduler, and refuses new work. Safe to call more than once.
   *
   * @throws LockClientCloseError listing the releases that failed.
   */
  close(options: CloseOptions = {}): Promise<void> {
    this.#closing ??= this.#shutdown(checkDuration('close timeout', options.timeout ?? this.#settings.leaseDuration, { min: 1 }));
    return this.#closing;
  }

  async [Symbol.asyncDispose](): Promise<void> {
    await this.close();
  }

  async #shutdown(timeoutMs: number): Promise<void> {
    this.#lifetime.abort(new LockClientClosedError());
    const failures: unknown[] = [];
    // Releases still unanswered then are abandoned: those locks lapse after their lease.
    const bound = deadline(timeoutMs);
    try {
      // A write already sent cannot be recalled: wait for those calls, which release what they win.
      for (const call of this.#acquiring.keys()) call.abort(new LockClientClosedError());
      await Promise.allSettled(this.#acquiring.values());
      const locks = [...this.#locks.values()];
      for (let i = 0; i < locks.length; i += CLOSE_CONCURRENCY) {
        const results = await Promise.allSettled(
          locks.slice(i, i + CLOSE_CONCURRENCY).map((lock) => this.releaseLock(lock, { signal: bound.signal })),
        );
        for (const result of results) if (result.status === 'rejected') failures.push(result.reason);
      }
    } finally {
      bound.clear();
      this.#scheduler.close();
      this.#ownedClient?.destroy();
    }
    if (failures.length > 0) throw new LockClientCloseError(failures);
  }

  #assertOpen(): void {
    if (this.#lifetime.signal.aborted) throw new LockClientClosedError();
  }

  #heldLockOf(lock: Lock): HeldLock {
    const held = lock instanceof Lock ? this.#heldOf.get(lock) : undefined;
    if (held === undefined) {
      throw new InvalidArgumentError('INVALID_OPTION', 'This lock was not acquired by this client; only the client that acquired a lock can heartbeat or release it');
    }
    return held;
  }
}
