/**
 * `LockClient`: acquire, hold, release and inspect locks in a DynamoDB table
 * shared with the Java `AmazonDynamoDBLockClient`.
 */
import { DynamoDBClient, QueryCommand, ScanCommand, type QueryCommandInput, type ScanCommandInput } from '@aws-sdk/client-dynamodb';
import { randomUUID } from 'node:crypto';
import type { Logger } from 'pino';
import { acquire, validateAcquireOptions, type AcquireContext, type AcquireLockOptions, type Acquisition } from './acquire-lock.js';
import { toBytes } from './bytes.js';
import { childAbortController, type ChildAbortController } from './child-abort-controller.js';
import { systemClock, type MonotonicClock } from './clock.js';
import { httpStatusOf, isConditionalCheckFailed, wasRefusedUnapplied } from './dynamodb-errors.js';
import {
  InvalidArgumentError,
  LockClientCloseError,
  LockClientClosedError,
  LockCurrentlyUnavailableError,
  LockLostError,
  LockNotGrantedError,
  LockTableDoesNotExistError,
  LockTableSchemaMismatchError,
} from './errors.js';
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
import { checkLockLease, resolveSettings, type LockClientOptions, type ResolvedSettings } from './options.js';
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
  type LockItem,
  type LockKey,
  type LockTable,
} from './protocol/index.js';
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
    this.#observations = new LockObservationCache(this.#settings.maxLockObservationCacheSize, this.#clock);
    this.#acquireContext = {
      dynamoDB: this.#dynamoDB,
      table: this.#table,
      ownerName,
      defaultLeaseDuration: this.#settings.leaseDuration,
      heartbeatPeriod: this.#settings.heartbeatPeriod,
      backgroundHeartbeats: this.#settings.backgroundHeartbeats,
      clock: this.#clock,
      observations: this.#observations,
      logger: this.#logger,
      explain: (error) => explainTableError(this.#dynamoDB, this.#table, error),
    };
    this.#lockOperations = {
      clock: this.#clock,
      releaseLock: (lock, releaseOptions) => this.releaseLock(lock, releaseOptions),
      sendHeartbeat: (lock, heartbeatOptions) => this.sendHeartbeat(lock, heartbeatOptions),
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
    });
    const lock = new Lock(held, this.#lockOperations);
    this.#heldOf.set(lock, held);

    const previous = this.#locks.get(held.id);
    if (previous !== undefined) {
      // This client took over its own earlier, lapsed hold of the same lock.
      this.#markLost(this.#heldOf.get(previous) as HeldLock, 'this client acquired the lock again');
    }
    this.#locks.set(held.id, lock);

    const monitor = options.sessionMonitor;
    if (monitor !== undefined) {
      held.sessionMonitor = { safeTimeWithoutHeartbeat: monitor.safeTimeWithoutHeartbeat, callback: monitor.callback, fired: false };
    }
    this.#startBackgroundWork(held, lock);
    return lock;
  }

  /** Schedules the lock's heartbeats and session checks on the client's scheduler. */
  #startBackgroundWork(held: HeldLock, lock: Lock): void {
    if (this.#settings.backgroundHeartbeats) {
      held.heartbeatTask ??= this.#scheduler.createTask(() => this.#backgroundHeartbeat(held, lock), { limited: true });
      this.#scheduler.schedule(held.heartbeatTask, held.lookupTime + this.#settings.heartbeatPeriod);
    }
    if (held.sessionMonitor !== undefined) {
      held.monitorTask ??= this.#scheduler.createTask(() => this.#checkSession(held), { limited: false });
      this.#scheduleSessionCheck(held);
    }
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
   * the last one). Background heartbeats call this for you.
   *
   * @throws LockLostError when the lock is no longer held; it is then dropped.
   */
  async sendHeartbeat(lock: Lock, options: SendHeartbeatOptions = {}): Promise<void> {
    const held = this.#heldLockOf(lock);
    if (options.deleteData && options.data !== undefined) {
      throw new InvalidArgumentError('CONFLICTING_OPTIONS', 'sendHeartbeat: pass data or deleteData, not both');
    }
    const leaseDurationMs =
      options.leaseDuration === undefined ? held.leaseDurationMs : this.#checkLockLease(options.leaseDuration);
    const data = toBytes(options.data);
    if (data !== undefined) this.#checkItemSize(held, data, false);
    this.#assertStillHeld(held);
    await held.exclusive(async () => {
      this.#assertStillHeld(held);
      const newRecordVersionNumber = randomUUID();
      const request = buildHeartbeatRequest(this.#table, held, {
        newRecordVersionNumber,
        leaseDurationMs,
        data,
        deleteData: options.deleteData,
        refuseReleased: true,
      });
      const sentAt = this.#clock.now();
      try {
        await sendWrite(this.#dynamoDB, request);
      } catch (error) {
        if (isConditionalCheckFailed(error)) {
          this.#markLost(held, 'its heartbeat was refused: another client took it, or it was deleted or released', error);
          throw new LockLostError('its heartbeat was refused: another client took it, or it was deleted or released', held, { cause: error });
        }
        if (!wasRefusedUnapplied(error)) {
          // No answer, or a 5xx: the write may have been applied, so its RVN may now be the lock's.
          held.uncertainRecordVersionNumbers.push(newRecordVersionNumber);
        }
        if (this.#settings.holdLockOnServiceUnavailable && httpStatusOf(error) === 503) {
          // Java's opt-in: pretend the heartbeat worked although the RVN in the table may not have changed.
          held.lookupTime = this.#clock.now();
          this.#scheduleSessionCheck(held);
          return;
        }
        throw error;
      }
      held.recordVersionNumber = newRecordVersionNumber;
      held.uncertainRecordVersionNumbers = [];
      held.lookupTime = sentAt;
      held.leaseDurationMs = leaseDurationMs;
      if (options.deleteData) held.data = undefined;
      else if (data !== undefined) held.data = data;
      if (held.sessionMonitor !== undefined) held.sessionMonitor.fired = false;
      this.#scheduleSessionCheck(held);
    });
  }

  #checkLockLease(leaseDuration: unknown): number {
    return checkLockLease(leaseDuration, this.#settings);
  }

  #assertStillHeld(held: HeldLock): void {
    if (held.state === 'held' && held.isExpired(this.#clock.now())) {
      this.#markLost(held, 'its lease ran out before a heartbeat succeeded');
    }
    if (held.state !== 'held') throw new LockLostError(`it is ${held.state}`, held);
  }

  async #backgroundHeartbeat(held: HeldLock, lock: Lock): Promise<void> {
    let failed = false;
    try {
      await this.sendHeartbeat(lock);
    } catch (error) {
      failed = true;
      if (!(error instanceof LockLostError)) {
        this.#logger?.warn({ err: error, partitionKey: held.partitionKey, sortKey: held.sortKey }, 'heartbeat failed; retrying');
      }
    }
    if (held.state !== 'held' || held.heartbeatTask === undefined) return;
    const period = this.#settings.heartbeatPeriod;
    const now = this.#clock.now();
    // After a failure, try again soon but not in a tight loop.
    const next = failed ? now + Math.min(period / 4, 1_000) : held.lookupTime + period;
    this.#scheduler.schedule(held.heartbeatTask, Math.max(next, now));
  }

  #scheduleSessionCheck(held: HeldLock): void {
    if (held.monitorTask === undefined || held.sessionMonitor === undefined || held.state !== 'held') return;
    this.#scheduler.schedule(held.monitorTask, held.lookupTime + held.sessionMonitor.safeTimeWithoutHeartbeat);
  }

  #checkSession(held: HeldLock): void {
    const monitor = held.sessionMonitor;
    if (monitor === undefined || held.state !== 'held' || monitor.fired) return;
    const dueAt = held.lookupTime + monitor.safeTimeWithoutHeartbeat;
    if (this.#clock.now() < dueAt) {
      this.#scheduleSessionCheck(held);
      return;
    }
    monitor.fired = true;
    try {
      monitor.callback?.();
    } catch (error) {
      this.#logger?.error({ err: error, partitionKey: held.partitionKey }, 'session monitor callback threw');
    }
  }

  #markLost(held: HeldLock, reason: string, cause?: unknown): void {
    if (held.state === 'lost' || held.state === 'released') return;
    held.state = 'lost';
    this.#untrack(held);
    this.#logger?.warn({ err: cause, partitionKey: held.partitionKey, sortKey: held.sortKey }, `lock lost: ${reason}`);
  }

  #untrack(held: HeldLock): void {
    const current = this.#locks.get(held.id);
    if (current !== undefined && this.#heldOf.get(current) === held) this.#locks.delete(held.id);
    if (held.heartbeatTask !== undefined) this.#scheduler.cancel(held.heartbeatTask);
    if (held.monitorTask !== undefined) this.#scheduler.cancel(held.monitorTask);
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
    if (held.state !== 'held') return false;
    held.state = 'releasing';
    this.#untrack(held);
    return held.exclusive(async () => {
      try {
        const request = buildReleaseRequest(this.#table, held, {
          deleteLock,
          data,
          // A kept item gets a new RVN so that no late heartbeat or replayed release can match it.
          newRecordVersionNumber: deleteLock ? undefined : randomUUID(),
          refuseReleased: true,
        });
        await sendWrite(this.#dynamoDB, request);
        held.state = 'released';
        return true;
      } catch (error) {
        if (isConditionalCheckFailed(error)) {
          held.state = 'lost';
          return false;
        }
        if (wasRefusedUnapplied(error)) {
          // DynamoDB answered and changed nothing: the lock is still ours, so keep it alive.
          held.state = 'held';
          this.#locks.set(held.id, lock);
          this.#startBackgroundWork(held, lock);
          throw error;
        }
        if (options.bestEffort) {
          held.state = 'released';
          this.#logger?.warn({ err: error, partitionKey: held.partitionKey }, 'best-effort release failed; the lock will expire');
          return false;
        }
        // Unknown outcome: heartbeats have stopped, so the lock lapses unless the release was applied.
        held.state = 'lost';
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
  close(): Promise<void> {
    this.#closing ??= this.#shutdown();
    return this.#closing;
  }

  async [Symbol.asyncDispose](): Promise<void> {
    await this.close();
  }

  async #shutdown(): Promise<void> {
    this.#lifetime.abort(new LockClientClosedError());
    const failures: unknown[] = [];
    try {
      // A write already sent cannot be recalled: wait for those calls, which release what they win.
      for (const call of this.#acquiring.keys()) call.abort(new LockClientClosedError());
      await Promise.allSettled(this.#acquiring.values());
      const locks = [...this.#locks.values()];
      for (let i = 0; i < locks.length; i += CLOSE_CONCURRENCY) {
        const results = await Promise.allSettled(locks.slice(i, i + CLOSE_CONCURRENCY).map((lock) => this.releaseLock(lock)));
        for (const result of results) if (result.status === 'rejected') failures.push(result.reason);
      }
    } finally {
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
