/**
 * `LockClient`: acquire, hold, release and inspect locks in a DynamoDB table
 * shared with the Java `AmazonDynamoDBLockClient`. A facade over two peers:
 * the acquirer (acquire/), which sends everything about locks this client
 * does not hold, and the held locks (heartbeat/), which keep and release the ones
 * it does.
 */
import type { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { loggerWithBindings, type Logger } from './base/logger.js';
import { Acquirer } from './acquire/acquirer.js';
import { ACQUIRE_LOCK_OPTION_NAMES, type AcquireLockOptions } from './acquire/acquire-options.js';
import { ADOPT_LOCK_OPTION_NAMES, type AdoptLockOptions } from './acquire/adopt-lock.js';
import { ACQUIRE_LOCKS_OPTION_NAMES, type AcquireLocksOptions, type GroupKey } from './acquire/group-options.js';
import { LockGroup } from './lock-group.js';
import { systemClock } from './base/clock.js';
import { deadline } from './primitives/deadline.js';
import { toBytes } from './primitives/bytes.js';
import { senderOfSource } from './dynamodb/dynamodb-sender.js';
import { HeartbeatLane } from './dynamodb/heartbeat-lane.js';
import { heldByAnother, InvalidArgumentError, LockClientCloseError, LockClientClosedError } from './base/errors.js';
import type { Subscription } from './base/events.js';
import { lockId, type LockKey } from './base/lock-key.js';
import { HeldLocks } from './heartbeat/held-locks.js';
import { Lock, LockHandles, LockSnapshot, type LockOperations, type ReleaseLockOptions, type SendHeartbeatOptions } from './lock.js';
import type { LockClientEvents } from './lock-client-events.js';
import type { CloseOptions, GetLockOptions, ListLocksOptions, LockKeyOptions } from './lock-client-options.js';
import { assertLockTableExists, createLockTable, lockTableExists, type CreateLockTableOptions } from './dynamodb/lock-table.js';
import { LIST_LOCKS_DEFAULTS } from './settings/defaults.js';
import { checkOptionNames } from './settings/argument-checks.js';
import { withLock, type WithLockOptions } from './with-lock.js';
import { checkClientSetup, checkDuration, resolveSettings, type LockClientOptions, type ResolvedSettings } from './settings/options.js';
import { validateLockKey, type LockHandOff, type LockTable } from './protocol/index.js';
import type { LockListing } from './dynamodb/list-locks.js';
import { ReplicationCheck } from './dynamodb/table-replication.js';
import { AbandonedItems } from './gc/abandoned-items.js';
import type { AbandonedItemsReport, CollectAbandonedOptions } from './gc/collect-options.js';
import { Semaphores, type AcquirePermitOptions, type AcquirePermitsOptions } from './semaphore/semaphores.js';
import { ACQUIRE_PERMIT_OPTION_NAMES, ACQUIRE_PERMITS_OPTION_NAMES } from './semaphore/permit-options.js';

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
  readonly #logger: Logger | undefined;
  readonly #holding: HeldLocks;
  readonly #acquirer: Acquirer;
  readonly #abandonedItems: AbandonedItems;
  readonly #semaphores: Semaphores;
  /** Aborted by `close()` so that waiting acquisitions end at once. */
  readonly #lifetime = new AbortController();
  #closing: Promise<void> | undefined;
  readonly #lockOperations: LockOperations = {
    // Async, so that bad data rejects the returned promise rather than throwing.
    releaseLock: async (held, options = {}) => this.#holding.releaseLock(held, { ...options, data: toBytes(options.data) }),
    sendHeartbeat: (held, options = {}) => this.#holding.sendHeartbeat(held, options),
    transactWrite: async (held, items, options) => {
      this.#replication?.refuseTransactions('guarded writes (lock.transactWrite)');
      return this.#holding.transactWrite(held, items, options);
    },
    guardCondition: (held) => this.#holding.guardCondition(held),
    handOff: (held) => this.#holding.handOff(held),
  };
  readonly #handles = new LockHandles(this.#lockOperations);
  /** Refuses an eventually consistent global table; absent with `allowEventuallyConsistentGlobalTable`. */
  readonly #replication: ReplicationCheck | undefined;

  constructor(options: LockClientOptions) {
    const settings = (this.#settings = resolveSettings(options));
    const { tableName, partitionKeyName, sortKeyName, ownerName, fencingTableName } = settings;
    this.ownerName = ownerName;
    this.tableName = tableName;
    const table = (this.#table = { tableName, partitionKeyName, sortKeyName });
    this.#fencingTable = fencingTableName === undefined ? undefined : { ...table, tableName: fencingTableName };
    ({ dynamoDB: this.#dynamoDB, owned: this.#ownedClient } = senderOfSource(options));
    const clock = options.clock ?? systemClock;
    const logger = (this.#logger = loggerWithBindings(options.logger, { lockTable: tableName, ownerName }));
    checkClientSetup(settings, clock, logger);
    const dynamoDB = this.#dynamoDB;
    this.#heartbeatLane = new HeartbeatLane(dynamoDB);
    const heartbeatDynamoDB = this.#heartbeatLane.dynamoDB;
    this.#holding = new HeldLocks({ dynamoDB, heartbeatDynamoDB, table, settings, clock, logger });
    const lifetime = this.#lifetime.signal;
    this.#replication = settings.allowEventuallyConsistentGlobalTable
      ? undefined
      : new ReplicationCheck({ dynamoDB, table, fencing: fencingTableName !== undefined, lifetime });
    const [fencingTable, replication, holding] = [this.#fencingTable, this.#replication, this.#holding];
    this.#acquirer = new Acquirer({ dynamoDB, heartbeatDynamoDB, table, fencingTable, settings, clock, logger, replication, holding, lifetime });
    this.#abandonedItems = new AbandonedItems({ dynamoDB, table, settings, clock, logger, holding, lifetime });
    this.#semaphores = new Semaphores({ acquirer: this.#acquirer, dynamoDB, table, settings, clock, logger, holding, lifetime });
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
    const checked = checkOptionNames('acquireLock', options, ACQUIRE_LOCK_OPTION_NAMES);
    return this.#handles.of(await this.#acquirer.acquire({ partitionKey, sortKey: checked.sortKey }, checked));
  }

  /**
   * Acquires every lock of `keys` or none, one transaction per attempt, never holding one while waiting for another (README
   * "Several locks at once"). Throws as {@link acquireLock} does; `InvalidArgumentError` `LOCK_ALREADY_HELD` for a key it holds.
   */
  async acquireLocks(keys: readonly GroupKey[], options: AcquireLocksOptions = {}): Promise<LockGroup> {
    this.#assertOpen();
    const checked = checkOptionNames('acquireLocks', options, ACQUIRE_LOCKS_OPTION_NAMES);
    return new LockGroup((await this.#acquirer.acquireGroup(keys, checked)).map((held) => this.#handles.of(held)));
  }

  /**
   * Takes one permit of the semaphore `name` of `options.permits` permits (docs/semaphores.md): a {@link Lock} on one
   * permit's key. Waits and throws as {@link acquireLock}; `SemaphorePermitsMismatchError` when its clients disagree on N.
   */
  async acquirePermit(name: string, options: AcquirePermitOptions): Promise<Lock> {
    this.#assertOpen();
    const checked = checkOptionNames('acquirePermit', options, ACQUIRE_PERMIT_OPTION_NAMES);
    const [lock] = (await this.#semaphores.acquire(name, { ...checked, count: 1 })).map((held) => this.#handles.of(held));
    return lock as Lock;
  }

  /** Takes `options.count` permits of the semaphore `name`, all or none, as {@link acquireLocks} takes locks. */
  async acquirePermits(name: string, options: AcquirePermitsOptions): Promise<LockGroup> {
    this.#assertOpen();
    const checked = checkOptionNames('acquirePermits', options, ACQUIRE_PERMITS_OPTION_NAMES);
    return new LockGroup((await this.#semaphores.acquire(name, checked)).map((held) => this.#handles.of(held)));
  }

  /**
   * {@link acquireLock} as Java's "try": it waits just as long (the holder's
   * lease plus `additionalTimeToWaitForLock`; with `shouldSkipBlockingWait`,
   * not at all), but resolves to `undefined` where that would throw
   * `LockNotGrantedError` or `LockCurrentlyUnavailableError`.
   *
   * @throws DynamoDBUnavailableError when DynamoDB gave no usable answer until the deadline.
   */
  async tryAcquireLock(partitionKey: string, options: AcquireLockOptions & LockKeyOptions = {}): Promise<Lock | undefined> {
    checkOptionNames('tryAcquireLock', options, ACQUIRE_LOCK_OPTION_NAMES);
    try {
      return await this.acquireLock(partitionKey, options);
    } catch (error) {
      if (heldByAnother(error)) return undefined;
      throw error;
    }
  }

  /** Adopts a lock handed off by `lock.handOff()` (docs/hand-over.md); throws `LockHandOffError` (`code`: why not). */
  async adoptLock(handle: LockHandOff | string, options: AdoptLockOptions = {}): Promise<Lock> {
    this.#assertOpen();
    return this.#handles.of(await this.#acquirer.adopt(handle, checkOptionNames('adoptLock', options, ADOPT_LOCK_OPTION_NAMES)));
  }

  // ── Holding ──────────────────────────────────────────────────────────────

  /**
   * Subscribes to what happens to this client's locks; see {@link LockClientEvents}.
   * @returns a subscription whose `dispose()` unsubscribes.
   */
  on<Name extends keyof LockClientEvents>(name: Name, listener: (event: LockClientEvents[Name]) => void): Subscription {
    return this.#holding.on(name, ({ held, ...details }) => {
      // Each event of HoldEvents is the event of LockClientEvents with the record in place of the handle.
      listener({ ...details, lock: this.#handles.of(held) } as unknown as LockClientEvents[Name]);
    });
  }

  /**
   * Renews the lease of a lock this client holds (a new RVN, conditioned on
   * the last one). Background heartbeats do this for you.
   *
   * @throws LockLostError when the lock is no longer held; it is then dropped.
   */
  async sendHeartbeat(lock: Lock, options: SendHeartbeatOptions = {}): Promise<void> {
    return this.#lockOperations.sendHeartbeat(this.#handles.heldBehind(lock), options);
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
    const locking = { acquireLock: this.acquireLock.bind(this), releaseLock: this.releaseLock.bind(this), logger: this.#logger };
    return withLock(locking, partitionKey, routine, options);
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
    return this.#lockOperations.releaseLock(this.#handles.heldBehind(lock), options);
  }

  // ── Reading ──────────────────────────────────────────────────────────────

  /**
   * The lock on this key: this client's {@link Lock} if it holds it, else a
   * read-only {@link LockSnapshot} of the current holder, else `undefined`
   * (no item, or a released one unless `includeReleased`).
   */
  async getLock(partitionKey: string, options: GetLockOptions = {}): Promise<Lock | LockSnapshot | undefined> {
    this.#assertOpen();
    const key: LockKey = { partitionKey, sortKey: options.sortKey };
    validateLockKey(this.#table, key);
    const mine = this.#holding.get(lockId(key));
    if (mine !== undefined) return this.#handles.of(mine);
    const observation = await this.#acquirer.readLock(key, options.signal);
    const hidden = observation?.record.isReleased === true && options.includeReleased !== true;
    return observation === undefined || hidden ? undefined : new LockSnapshot(observation.record, observation.observedAt);
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
    for await (const { record, observedAt } of this.#acquirer.list(listing, signal)) yield new LockSnapshot(record, observedAt);
  }

  /**
   * Deletes the items whose holders abandoned them: those whose RVN stood still for their lease while this pass
   * watched, each conditioned on that RVN and owner, so that no live holder loses its lock (docs/gc.md).
   */
  collectAbandoned(options: CollectAbandonedOptions = {}): Promise<AbandonedItemsReport> {
    return this.#abandonedItems.collect(options);
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
    let failures: unknown[];
    // Releases still unanswered then are abandoned: those locks lapse after their lease.
    const bound = deadline(timeoutMs);
    try {
      await this.#acquirer.close();
      failures = await this.#holding.releaseAll(bound.signal);
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
