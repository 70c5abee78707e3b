/**
 * `LockClient`: acquire, hold, release and inspect locks in a DynamoDB table
 * shared with the Java `AmazonDynamoDBLockClient`.
 */
import { setMaxListeners } from 'node:events';
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { loggerWithBindings, type Logger } from './base/logger.js';
import { acquire, validateAcquireOptions, type AcquireContext, type AcquireLockOptions, type Acquisition } from './acquire/acquire-lock.js';
import { KeySchemaProof } from './acquire/key-schema-proof.js';
import { LockPollers } from './acquire/lock-poller.js';
import { REMEMBERED_TURNS, Turns } from './acquire/turns.js';
import { childAbortController, type ChildAbortController } from './primitives/child-abort-controller.js';
import { systemClock, type MonotonicClock } from './base/clock.js';
import { deadline } from './primitives/deadline.js';
import { toBytes } from './primitives/bytes.js';
import { sdkClientOf } from './dynamodb/dynamodb-sender.js';
import { AcquisitionRequests } from './dynamodb/acquisition-requests.js';
import { HeartbeatLane } from './dynamodb/heartbeat-lane.js';
import {
  DynamoDBUnavailableError,
  InvalidArgumentError,
  LockClientCloseError,
  LockClientClosedError,
  LockCurrentlyUnavailableError,
  LockNotGrantedError,
  LockTableDoesNotExistError,
  LockTableSchemaMismatchError,
} from './base/errors.js';
import type { Subscription } from './base/events.js';
import type { HeldLock } from './hold/held-lock.js';
import { lockId } from './base/lock-key.js';
import { ACQUISITION_REQUESTS_IN_FLIGHT, ACQUISITIONS_WHILE_BEHIND_SHARE, AcquisitionGate } from './acquire/acquisition-gate.js';
import { inTurnWithinBound } from './acquire/request-bound.js';
import { HeldLocks } from './hold/held-locks.js';
import { heldLockBehind, Lock, LockSnapshot, type LockOperations, type ReleaseLockOptions, type SendHeartbeatOptions } from './lock.js';
import type { LockClientEvents } from './lock-client-events.js';
import {
  assertLockTableExists,
  createLockTable,
  explainTableError,
  lockTableExists,
  type CreateLockTableOptions,
} from './dynamodb/lock-table.js';
import { LockObservationCache } from './acquire/observation-cache.js';
import { ACQUIRE_DEFAULTS, LIST_LOCKS_DEFAULTS, WITH_LOCK_DEFAULTS } from './settings/defaults.js';
import { checkDuration, checkLockLease, resolveSettings, type LockClientOptions, type ResolvedSettings } from './settings/options.js';
import { validateLockKey, type LockTable } from './protocol/index.js';
import { LockPages, type LockListing } from './dynamodb/list-locks.js';
import type { LockKey } from './base/lock-key.js';
import { readLock, type LockObservation } from './dynamodb/read-lock.js';
import { ReplicationCheck } from './dynamodb/table-replication.js';

export interface LockKeyOptions {
  /** The sort key value; required exactly when the table has a sort key. */
  readonly sortKey?: string;
}

export interface ListLocksOptions {
  /** Read with strong consistency (Java lists eventually consistently). @default true */
  readonly consistentRead?: boolean;
  readonly signal?: AbortSignal;
}

export interface WithLockOptions extends AcquireLockOptions, LockKeyOptions {
  /** Milliseconds the release after the routine may take; it is not retried. @default 5000 */
  readonly releaseTimeout?: number;
}

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
  /** The fencing table (`fencingTableName`), with the lock table's key names. */
  readonly #fencingTable: LockTable | undefined;
  readonly #dynamoDB: Pick<DynamoDBClient, 'send'>;
  readonly #ownedClient: DynamoDBClient | undefined;
  readonly #heartbeatLane: HeartbeatLane;
  readonly #clock: MonotonicClock;
  readonly #logger: Logger | undefined;
  readonly #holding: HeldLocks;
  readonly #observations: LockObservationCache;
  readonly #acquireContext: AcquireContext;
  /** Aborted by `close()` so that waiting acquisitions end at once. */
  readonly #lifetime = new AbortController();
  /** Acquisitions under way; `close()` aborts them and waits for them to settle. */
  readonly #acquiring = new Map<ChildAbortController, Promise<unknown>>();
  #closing: Promise<void> | undefined;
  /** The user's handle of each lock held, made once per lock. */
  readonly #handles = new WeakMap<HeldLock, Lock>();
  readonly #lockOperations: LockOperations = {
    releaseLock: async (held, options = {}) => {
      const released = await this.#holding.releaseLock(held, {
        deleteLock: options.deleteLock,
        data: toBytes(options.data),
        bestEffort: options.bestEffort,
        signal: options.signal,
      });
      if (released) this.#acquireContext.turns.released(lockId(held));
      return released;
    },
    sendHeartbeat: (held, options) => this.#sendHeartbeat(held, options),
    transactWrite: async (held, items, options) => {
      this.#replication?.refuseTransactions('guarded writes (lock.transactWrite)');
      return this.#holding.transactWrite(held, items, options);
    },
    guardCondition: (held) => this.#holding.guardCondition(held),
  };
  /** Refuses an eventually consistent global table; absent with `allowEventuallyConsistentGlobalTable`. */
  readonly #replication: ReplicationCheck | undefined;
  /** Listing checks the table's key schema once per client. */
  #listingSchemaCheck: Promise<void> | undefined;

  constructor(options: LockClientOptions) {
    this.#settings = resolveSettings(options);
    const { tableName, partitionKeyName, sortKeyName, ownerName } = this.#settings;
    this.ownerName = ownerName;
    this.tableName = tableName;
    this.#table = { tableName, partitionKeyName, sortKeyName };
    const { fencingTableName } = this.#settings;
    this.#fencingTable = fencingTableName === undefined ? undefined : { ...this.#table, tableName: fencingTableName };
    if (options.dynamoDB !== undefined) {
      this.#dynamoDB = sdkClientOf(options.dynamoDB);
    } else if (options.dynamoDBConfig !== undefined) {
      this.#ownedClient = new DynamoDBClient(options.dynamoDBConfig);
      this.#dynamoDB = this.#ownedClient;
    } else {
      throw new InvalidArgumentError('INVALID_OPTION', 'Pass either dynamoDB (a DynamoDBClient) or dynamoDBConfig');
    }
    this.#clock = options.clock ?? systemClock;
    this.#logger = loggerWithBindings(options.logger, { lockTable: tableName, ownerName });
    if (!this.#settings.backgroundHeartbeats && this.#settings.leaseDuration < 2 * this.#settings.heartbeatPeriod) {
      this.#logger?.warn({}, 'leaseDuration is less than twice heartbeatPeriod; heartbeat manually well within each lease');
    }
    this.#heartbeatLane = new HeartbeatLane(this.#dynamoDB);
    this.#holding = new HeldLocks({
      dynamoDB: this.#dynamoDB,
      heartbeatDynamoDB: this.#heartbeatLane.dynamoDB,
      table: this.#table,
      settings: this.#settings,
      clock: this.#clock,
      logger: this.#logger,
    });
    this.#replication = this.#settings.allowEventuallyConsistentGlobalTable
      ? undefined
      : new ReplicationCheck({
          dynamoDB: this.#dynamoDB,
          table: this.#table,
          fencing: fencingTableName !== undefined,
          lifetime: this.#lifetime.signal,
        });
    this.#observations = new LockObservationCache(this.#settings.maxLockObservationCacheSize, this.#clock);
    const requests = new AcquisitionRequests({
      dynamoDB: this.#dynamoDB,
      table: this.#table,
      clock: this.#clock,
      fencingTable: this.#fencingTable,
      // The option that keeps heartbeats out of PartiQL batches keeps acquisitions out of them too.
      batching: this.#settings.heartbeatBatchSize > 1,
      logger: this.#logger,
    });
    const gate = new AcquisitionGate({
      heartbeatsBehind: () => this.#holding.heartbeatsBehind(),
      limit: ACQUISITION_REQUESTS_IN_FLIGHT,
      limitWhileBehind: Math.max(1, Math.floor(this.#settings.heartbeatConcurrency * ACQUISITIONS_WHILE_BEHIND_SHARE)),
    });
    this.#acquireContext = {
      requests,
      table: this.#table,
      ownerName,
      defaultLeaseDuration: this.#settings.leaseDuration,
      heartbeatPeriod: this.#settings.heartbeatPeriod,
      backgroundHeartbeats: this.#settings.backgroundHeartbeats,
      safetyMargin: this.#settings.safetyMargin,
      clock: this.#clock,
      observations: this.#observations,
      // Polls count against the acquisition limit; one unanswered for a lease is abandoned, and the next poll reads again.
      pollers: new LockPollers({
        clock: this.#clock,
        read: (key, signal) => this.#lookingRequest(signal, (bounded) => requests.read(key, bounded)),
      }),
      keySchema: new KeySchemaProof(this.#table),
      logger: this.#logger,
      explain: (error) => explainTableError(this.#dynamoDB, this.#table, error),
      // Few enough that heartbeats get nearly all of the server while they catch up.
      turns: new Turns(this.#clock, REMEMBERED_TURNS),
      gate,
      replication: this.#replication,
    };
  }

  // ── Acquiring ────────────────────────────────────────────────────────────

  /**
   * Acquires the lock on `partitionKey`, waiting while another client holds
   * it: up to that holder's lease plus `additionalTimeToWaitForLock`.
   *
   * @throws LockNotGrantedError when the lock stayed held until the deadline;
   *   its subclass DynamoDBUnavailableError when DynamoDB gave no usable answer until then.
   * @throws LockCurrentlyUnavailableError with `shouldSkipBlockingWait` while someone else holds it.
   */
  async acquireLock(partitionKey: string, options: AcquireLockOptions & LockKeyOptions = {}): Promise<Lock> {
    this.#assertOpen();
    const key: LockKey = { partitionKey, sortKey: options.sortKey };
    validateAcquireOptions(this.#acquireContext, key, options);
    if (options.reentrant) {
      const mine = this.#holding.get(lockId(key));
      if (mine?.isHeld() === true) return this.#handleOf(mine);
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
    const { record, lookupTime, lookupWallTime } = acquisition;
    const monitor = options.sessionMonitor;
    const lock = this.#handleOf(
      this.#holding.track({
        key: record,
        ownerName: record.ownerName,
        recordVersionNumber: record.recordVersionNumber,
        leaseDurationMs: record.leaseDurationMs,
        lookupTime,
        lookupWallTime,
        data: record.data,
        additionalAttributes: acquisition.additionalAttributes,
        deleteLockOnRelease: options.deleteLockOnRelease ?? ACQUIRE_DEFAULTS.deleteLockOnRelease,
        fencingToken: acquisition.fencingToken,
        sessionMonitor:
          monitor === undefined ? undefined : { safeTimeWithoutHeartbeat: monitor.safeTimeWithoutHeartbeat, callback: monitor.callback },
      }),
    );
    if (call.signal.aborted || this.#lifetime.signal.aborted) {
      // The caller gave up (or the client closed) while the winning write was in flight: do not leave the lock held.
      await this.releaseLock(lock, { bestEffort: true }).catch(() => undefined);
      throw this.#lifetime.signal.aborted ? new LockClientClosedError() : call.signal.reason;
    }
    return lock;
  }

  /**
   * Like {@link acquireLock}, but resolves to `undefined` when someone else
   * holds the lock (where that would throw `LockNotGrantedError` or
   * `LockCurrentlyUnavailableError`).
   *
   * @throws DynamoDBUnavailableError when DynamoDB gave no usable answer until the deadline.
   */
  async tryAcquireLock(partitionKey: string, options: AcquireLockOptions & LockKeyOptions = {}): Promise<Lock | undefined> {
    try {
      return await this.acquireLock(partitionKey, options);
    } catch (error) {
      if (error instanceof DynamoDBUnavailableError) throw error;
      if (error instanceof LockNotGrantedError || error instanceof LockCurrentlyUnavailableError) return undefined;
      throw error;
    }
  }

  // ── Holding ──────────────────────────────────────────────────────────────

  /**
   * Subscribes to what happens to this client's locks; see {@link LockClientEvents}.
   * @returns a subscription whose `dispose()` unsubscribes.
   */
  on<Name extends keyof LockClientEvents>(name: Name, listener: (event: LockClientEvents[Name]) => void): Subscription {
    return this.#holding.on(name, ({ held, ...details }) => {
      // Each event of HoldEvents is the event of LockClientEvents with the record in place of the handle.
      listener({ ...details, lock: this.#handleOf(held) } as unknown as LockClientEvents[Name]);
    });
  }

  /**
   * Renews the lease of a lock this client holds (a new RVN, conditioned on
   * the last one). Background heartbeats do this for you.
   *
   * @throws LockLostError when the lock is no longer held; it is then dropped.
   */
  async sendHeartbeat(lock: Lock, options: SendHeartbeatOptions = {}): Promise<void> {
    return this.#lockOperations.sendHeartbeat(this.#heldLockOf(lock), options);
  }

  /**
   * Acquires the lock, runs `routine(signal, lock)`, and always releases the
   * lock afterwards. `signal` aborts (with a {@link LockLostError}) the moment
   * the lock can no longer be trusted, or when `options.signal` aborts; check
   * `lock.throwIfLost()` right before each effect that needs the lock, or
   * write to DynamoDB with `lock.transactWrite(items)`, which commits only
   * while the lock is held.
   *
   * The release is one attempt bounded by `releaseTimeout`; if it fails, the
   * lock lapses after its lease. Resolves with the routine's result.
   */
  async withLock<T>(
    partitionKey: string,
    routine: (signal: AbortSignal, lock: Lock) => Promise<T> | T,
    options: WithLockOptions = {},
  ): Promise<T> {
    const releaseTimeout = checkDuration('releaseTimeout', options.releaseTimeout ?? WITH_LOCK_DEFAULTS.releaseTimeout, { min: 1 });
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
    return this.#lockOperations.releaseLock(this.#heldLockOf(lock), options);
  }

  /** The user's handle on a lock this client holds: one per lock, made when it is first asked for. */
  #handleOf(held: HeldLock): Lock {
    let lock = this.#handles.get(held);
    if (lock === undefined) {
      lock = new Lock(held, this.#lockOperations);
      this.#handles.set(held, lock);
    }
    return lock;
  }

  /** The record behind a handle of this client's. */
  #heldLockOf(lock: Lock): HeldLock {
    const held = lock instanceof Lock ? heldLockBehind(lock, this.#lockOperations) : undefined;
    if (held === undefined) {
      throw new InvalidArgumentError(
        'INVALID_OPTION',
        'This lock was not acquired by this client; only the client that acquired a lock can heartbeat or release it',
      );
    }
    return held;
  }

  /** `Lock.sendHeartbeat`: a manual heartbeat, bounded by what is left of the safe time. */
  async #sendHeartbeat(held: HeldLock, options: SendHeartbeatOptions = {}): Promise<void> {
    if (options.deleteData === true && options.data !== undefined) {
      throw new InvalidArgumentError('CONFLICTING_OPTIONS', 'sendHeartbeat: pass data or deleteData, not both');
    }
    const leaseDurationMs = options.leaseDuration === undefined ? undefined : checkLockLease(options.leaseDuration, this.#settings);
    const data = toBytes(options.data);
    if (data !== undefined) this.#holding.checkItemSize(held, data, false);
    return this.#holding.sendHeartbeat(held, { leaseDurationMs, data, deleteData: options.deleteData });
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
    const mine = this.#holding.get(lockId(key));
    if (mine !== undefined) return this.#handleOf(mine);
    const snapshot = await this.#readSnapshot(key, options.signal);
    return snapshot === undefined || snapshot.isReleased ? undefined : snapshot;
  }

  async #readSnapshot(key: LockKey, signal?: AbortSignal): Promise<LockSnapshot | undefined> {
    try {
      const observation = await this.#lookingRequest(signal, (bounded) => readLock(this.#dynamoDB, this.#table, key, this.#clock, bounded));
      return observation === undefined ? undefined : new LockSnapshot(observation.record, observation.observedAt);
    } catch (error) {
      throw await explainTableError(this.#dynamoDB, this.#table, error);
    }
  }

  /**
   * A request that only looks at locks (a poll, `getLock`, a listing page):
   * it counts against the acquisition limit, and one unanswered for a lease
   * is abandoned (a `TimeoutError`), so that it never holds a slot for ever.
   */
  #lookingRequest<T>(signal: AbortSignal | undefined, request: (signal: AbortSignal) => Promise<T>): Promise<T> {
    return inTurnWithinBound(this.#acquireContext.gate, this.#settings.leaseDuration, signal, request);
  }

  /** True while this client holds the lock and may act on it (`Lock.isHeld()`). No DynamoDB call. */
  hasLock(partitionKey: string, options: LockKeyOptions = {}): boolean {
    return this.#holding.get(lockId({ partitionKey, sortKey: options.sortKey }))?.isHeld() === true;
  }

  /** Every lock in the table, released ones included, page by page (Scan). */
  getAllLocks(options: ListLocksOptions = {}): AsyncIterable<LockSnapshot> {
    return this.#list({ consistentRead: options.consistentRead ?? LIST_LOCKS_DEFAULTS.consistentRead }, options.signal);
  }

  /** Every lock sharing `partitionKey` (one per sort key), released ones included (Query). */
  getLocksByPartitionKey(partitionKey: string, options: ListLocksOptions = {}): AsyncIterable<LockSnapshot> {
    return this.#list({ partitionKey, consistentRead: options.consistentRead ?? LIST_LOCKS_DEFAULTS.consistentRead }, options.signal);
  }

  async *#list(listing: LockListing, signal: AbortSignal | undefined): AsyncGenerator<LockSnapshot> {
    this.#assertOpen();
    const pages = new LockPages(this.#dynamoDB, this.#table, this.#clock, listing); // checks the listing before any call
    this.#listingSchemaCheck ??= this.#checkSchemaForListing();
    await this.#listingSchemaCheck;
    while (!pages.done) {
      let page: Iterable<LockObservation>;
      try {
        page = await this.#lookingRequest(signal, (bounded) => pages.next(bounded));
      } catch (error) {
        throw await explainTableError(this.#dynamoDB, this.#table, error);
      }
      for (const { record, observedAt } of page) yield new LockSnapshot(record, observedAt);
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

  /**
   * Creates the fencing table named by `fencingTableName`, with the lock
   * table's key names (on-demand by default), and waits until it is ACTIVE.
   */
  async createFencingTable(options: CreateLockTableOptions = {}): Promise<void> {
    if (this.#fencingTable === undefined) {
      throw new InvalidArgumentError('INVALID_OPTION', 'createFencingTable needs the client option fencingTableName');
    }
    await createLockTable(this.#dynamoDB, this.#fencingTable, options);
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
    // Shared by up to CLOSE_CONCURRENCY releases in flight, each with the SDK's listeners on it.
    setMaxListeners(0, bound.signal);
    try {
      // Their requests are cut off; a write of unknown outcome is left to lapse, one that won is released.
      for (const call of this.#acquiring.keys()) call.abort(new LockClientClosedError());
      await Promise.allSettled(this.#acquiring.values());
      const locks = this.#holding.all();
      for (let i = 0; i < locks.length; i += CLOSE_CONCURRENCY) {
        const results = await Promise.allSettled(
          locks.slice(i, i + CLOSE_CONCURRENCY).map((held) => this.#lockOperations.releaseLock(held, { signal: bound.signal })),
        );
        for (const result of results) if (result.status === 'rejected') failures.push(result.reason);
      }
    } finally {
      bound.clear();
      this.#holding.stop();
      this.#heartbeatLane.destroy();
      this.#ownedClient?.destroy();
    }
    if (failures.length > 0) throw new LockClientCloseError(failures);
  }

  #assertOpen(): void {
    if (this.#lifetime.signal.aborted) throw new LockClientClosedError();
  }
}
