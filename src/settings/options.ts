/**
 * Client options, their defaults applied (defaults.ts), and the checks that
 * run before the client sends anything.
 */
import type { DynamoDBClientConfig } from '@aws-sdk/client-dynamodb';
import { randomUUID } from 'node:crypto';
import { hostname } from 'node:os';
import type { Logger } from '../base/logger.js';
import type { MonotonicClock } from '../base/clock.js';
import { CLIENT_DEFAULTS, defaultHeartbeatPeriod, defaultSafetyMargin } from './defaults.js';
import { InvalidArgumentError } from '../base/errors.js';
import { CLOCK_STAMP_ATTRIBUTE, FencingAttribute, LockAttribute, MAX_BATCH_STATEMENTS } from '../protocol/index.js';

/**
 * Anything with the `send` of an AWS SDK v3 `DynamoDBClient`, such as the client itself.
 *
 * Typed by shape, not as `DynamoDBClient`, so that a client of any AWS SDK
 * v3 version the package supports type-checks, also when a second copy of
 * the SDK sits somewhere in the application's tree: the SDK's own `send`
 * types name its private middleware types, which differ between any two
 * copies.
 */
export interface DynamoDBSender {
  send(command: object, options?: { readonly abortSignal?: AbortSignal }): Promise<unknown>;
}

/** Either your own DynamoDB client, or a configuration for one the lock client creates and owns. */
export type DynamoDBClientSource =
  | {
      /** A client you own (any AWS SDK v3 `DynamoDBClient`); `close()` leaves it open. */
      readonly dynamoDB: DynamoDBSender;
      readonly dynamoDBConfig?: never;
    }
  | {
      /** Configuration for a client the lock client creates and destroys in `close()`. */
      readonly dynamoDBConfig: DynamoDBClientConfig;
      readonly dynamoDB?: never;
    };

export interface LockClientSettings {
  /** The lock table; it must exist (see `createLockTable`). */
  readonly tableName: string;
  /** Partition key attribute name, shared by every client of the table. @default "key" */
  readonly partitionKeyName?: string;
  /** Sort key attribute name, if the table has one. @default none */
  readonly sortKeyName?: string;
  /**
   * This client's identity in the table. Must be unique per client instance.
   * @default the host name, a colon and a random UUID (Java puts no separator between them)
   */
  readonly ownerName?: string;
  /** How long, in milliseconds, a lock stays valid without a heartbeat; written on each lock. @default 20000 */
  readonly leaseDuration?: number;
  /** Milliseconds between a lock's heartbeats; at most half the lease. @default a quarter of `leaseDuration` (5000) */
  readonly heartbeatPeriod?: number;
  /**
   * Heartbeat held locks automatically (Java's `createHeartbeatBackgroundThread`).
   * When false, call `sendHeartbeat` yourself within every lease.
   * @default true
   */
  readonly backgroundHeartbeats?: boolean;
  /**
   * Milliseconds before a lock's lease runs out, counted from its last
   * confirmed write, at which this client gives the lock up: `lock.signal`
   * aborts and `lost` fires. Covers the time between a check and the act it
   * guards. @default a tenth of each lock's lease
   */
  readonly safetyMargin?: number;
  /**
   * How many heartbeat requests may be in flight at once; batch calls may
   * take at most a quarter of them (at least one). @default 32
   */
  readonly heartbeatConcurrency?: number;
  /**
   * Most background heartbeats sent together in one BatchExecuteStatement
   * call (PartiQL UPDATE statements that write what the heartbeat UpdateItem
   * writes, under the same condition), 1 to 25. Only heartbeats that are due
   * at the same moment are batched, so batches fill up when the client falls
   * behind; a lone heartbeat is a plain UpdateItem. Needs the
   * `dynamodb:PartiQLUpdate` permission on the table; without it the first
   * refused batch switches the client to one UpdateItem per heartbeat.
   * 1: never batch, neither heartbeats nor the new-lock writes of free locks
   * taken together (PartiQL INSERTs, `dynamodb:PartiQLInsert`). @default 25
   */
  readonly heartbeatBatchSize?: number;
  /**
   * Treat a heartbeat answered with HTTP 503 as a success, keeping the lock
   * locally although its RVN did not change. Unsafe: other clients will take
   * the lock once the lease runs out. @default false
   */
  readonly holdLockOnServiceUnavailable?: boolean;
  /** Capacity of the observation cache used by `shouldSkipBlockingWait`. @default 10000 */
  readonly maxLockObservationCacheSize?: number;
  /**
   * A second table (with the lock table's key names; see
   * `createFencingTable`) holding a fencing counter per lock key: every
   * acquisition by this client then gets `lock.fencingToken`, larger than
   * that of every earlier acquisition by a client with the same option. Java
   * clients never touch it. Costs one read more per acquisition, and the
   * acquisition write becomes a transaction with the counter's step.
   * @default none (no fencing tokens)
   */
  readonly fencingTableName?: string;
  /**
   * Use a lock table that is a global table with multi-Region eventual
   * consistency (MREC), which the client otherwise refuses with
   * `LockTableReplicationError`: each Region grants a lock on its own copy,
   * so clients in two Regions can hold one lock at once. When true, the
   * client skips its check of the table (one DescribeTable before its first
   * acquisition). @default false
   */
  readonly allowEventuallyConsistentGlobalTable?: boolean;
  /**
   * Opt-in: take over at once a lock whose holder has long stopped writing,
   * judged by wall clocks (README, "A long-dead lock taken at once"). Each
   * write of a lock by this client then also stores its wall-clock time
   * beside the RVN it writes, and this client takes a held lock at once when
   * that stamp still names the lock's RVN and is older than the lease plus
   * twice `maxSkew` ms on its own wall clock. Safe only while every client
   * that writes stamps to the table, and this one, keeps its wall clock within
   * `maxSkew` ms of true time. A stamp a Java client's write made void, or no
   * stamp, leaves Java's rule. @default none (off: nothing is stamped)
   */
  readonly clockBound?: { readonly maxSkew: number };
  /** Where to log: a pino logger, `console`, or anything with `debug`, `warn` and `error`. @default none, nothing is logged */
  readonly logger?: Logger;
  /** The monotonic clock leases are timed on; replace it only in tests. @default performance.now() */
  readonly clock?: MonotonicClock;
}

export type LockClientOptions = LockClientSettings & DynamoDBClientSource;

export function defaultOwnerName(): string {
  let host = '';
  try {
    host = hostname();
  } catch {
    // Java falls back to the UUID alone when the host name is unknown.
  }
  return host === '' ? randomUUID() : `${host}:${randomUUID()}`;
}

/** A whole number of milliseconds, ≥ `min`; `Infinity` only where `allowInfinity`. */
export function checkDuration(name: string, value: unknown, options: { min?: number; allowInfinity?: boolean } = {}): number {
  const min = options.min ?? 0;
  const ok =
    typeof value === 'number' &&
    ((Number.isSafeInteger(value) && value <= MAX_DURATION_MS) || (options.allowInfinity === true && value === Infinity)) &&
    value >= min;
  if (!ok) {
    throw new InvalidArgumentError(
      'INVALID_DURATION',
      `${name} must be a whole number of milliseconds ≥ ${min} and ≤ ${MAX_DURATION_MS} (about 24.8 days)` +
        `${options.allowInfinity ? ' (or Infinity)' : ''}, got ${String(value)}`,
    );
  }
  return value;
}

/**
 * The shortest `refreshPeriod` of any wait (a lock's, a group's, a
 * semaphore's, an election's): a shorter one would have a waiter read
 * without a pause, a busy loop on DynamoDB.
 */
export const MIN_REFRESH_PERIOD_MS = 10;

export function checkRefreshPeriod(value: unknown): number {
  return checkDuration('refreshPeriod', value, { min: MIN_REFRESH_PERIOD_MS });
}

/** The longest delay Node's timers take; a longer one fires after 1 ms. */
export const MAX_DURATION_MS = 2 ** 31 - 1;

export function checkCount(name: string, value: unknown, limits: { max?: number } = {}): number {
  const max = limits.max ?? Number.MAX_SAFE_INTEGER;
  if (typeof value !== 'number' || !Number.isSafeInteger(value) || value < 1 || value > max) {
    const range = limits.max === undefined ? '≥ 1' : `from 1 to ${max}`;
    throw new InvalidArgumentError('INVALID_OPTION', `${name} must be a whole number ${range}, got ${String(value)}`);
  }
  return value;
}

export function checkFlag(name: string, value: unknown): boolean {
  if (typeof value !== 'boolean') {
    throw new InvalidArgumentError('INVALID_OPTION', `${name} must be true or false, got ${JSON.stringify(value)}`);
  }
  return value;
}

function checkName(name: string, value: unknown): string {
  if (typeof value !== 'string' || value.length === 0) {
    throw new InvalidArgumentError('INVALID_OPTION', `${name} must be a non-empty string, got ${JSON.stringify(value)}`);
  }
  // DynamoDB stores UTF-8: a lone surrogate would come back as another string, and no item would be ours.
  if (!value.isWellFormed()) {
    throw new InvalidArgumentError('INVALID_OPTION', `${name} must be well-formed UTF-16 (it has a lone surrogate): ${JSON.stringify(value)}`);
  }
  return value;
}

/** A key attribute may not take a name the protocol writes itself: the lock's own fields would overwrite the key. */
function checkKeyName(name: 'partitionKeyName' | 'sortKeyName', value: unknown): string {
  const checked = checkName(name, value);
  const protocolNames: readonly string[] = [...Object.values(LockAttribute), CLOCK_STAMP_ATTRIBUTE];
  if (protocolNames.includes(checked)) {
    throw new InvalidArgumentError(
      'RESERVED_ATTRIBUTE',
      `${name} ${JSON.stringify(checked)} is an attribute every lock item carries (${protocolNames.join(', ')}); choose another key name`,
    );
  }
  return checked;
}

/** The fencing table has the lock table's key schema: a key named like a fencing attribute would overwrite it. */
function checkFencingKeyNames(settings: Pick<ResolvedSettings, 'partitionKeyName' | 'sortKeyName'>): void {
  const fencingNames: readonly string[] = Object.values(FencingAttribute);
  for (const name of ['partitionKeyName', 'sortKeyName'] as const) {
    const value = settings[name];
    if (value === undefined || !fencingNames.includes(value)) continue;
    throw new InvalidArgumentError(
      'RESERVED_ATTRIBUTE',
      `${name} ${JSON.stringify(value)} is an attribute every fencing item carries (${fencingNames.join(', ')}); choose another key name`,
    );
  }
}

type LeaseSettings = Pick<ResolvedSettings, 'backgroundHeartbeats' | 'heartbeatPeriod' | 'safetyMargin'>;

/** The safety margin of a lock with this lease. */
export function safetyMarginFor(leaseDuration: number, settings: Pick<ResolvedSettings, 'safetyMargin'>): number {
  return settings.safetyMargin ?? defaultSafetyMargin(leaseDuration);
}

/**
 * A lease for one lock: background heartbeats must fit into it at least
 * twice, and the first must be due before the safety margin starts.
 */
export function checkLockLease(leaseDuration: unknown, settings: LeaseSettings): number {
  const lease = checkDuration('leaseDuration', leaseDuration, { min: 1 });
  if (settings.backgroundHeartbeats && lease < 2 * settings.heartbeatPeriod) {
    throw new InvalidArgumentError(
      'LEASE_TOO_SHORT',
      `leaseDuration (${lease} ms) must be at least twice heartbeatPeriod (${settings.heartbeatPeriod} ms), ` +
        'so that one late heartbeat does not cost the lock; four times is recommended',
    );
  }
  const margin = safetyMarginFor(lease, settings);
  const floor = settings.backgroundHeartbeats ? settings.heartbeatPeriod : 0;
  if (lease - margin <= floor) {
    throw new InvalidArgumentError(
      'LEASE_TOO_SHORT',
      `leaseDuration (${lease} ms) minus safetyMargin (${margin} ms) must exceed ` +
        (settings.backgroundHeartbeats ? `heartbeatPeriod (${settings.heartbeatPeriod} ms)` : 'zero') +
        ', or the lock would be given up before it could be renewed',
    );
  }
  return lease;
}

const TABLE_NAME = /^[A-Za-z0-9_.-]{3,255}$/;

function checkTableName(value: unknown, option = 'tableName'): string {
  if (typeof value !== 'string' || !TABLE_NAME.test(value)) {
    throw new InvalidArgumentError(
      'INVALID_OPTION',
      `${option} must be 3 to 255 characters of A-Z, a-z, 0-9, '_', '-' and '.', got ${JSON.stringify(value)}`,
    );
  }
  return value;
}

function checkClockBound(value: unknown): { readonly maxSkew: number } {
  if (typeof value !== 'object' || value === null) {
    throw new InvalidArgumentError('INVALID_OPTION', `clockBound must be an object like { maxSkew: 100 }, got ${String(value)}`);
  }
  return Object.freeze({ maxSkew: checkDuration('clockBound.maxSkew', (value as { maxSkew?: unknown }).maxSkew) });
}

export interface ResolvedSettings {
  readonly tableName: string;
  readonly partitionKeyName: string;
  readonly sortKeyName: string | undefined;
  readonly ownerName: string;
  readonly leaseDuration: number;
  readonly heartbeatPeriod: number;
  readonly backgroundHeartbeats: boolean;
  readonly heartbeatConcurrency: number;
  readonly heartbeatBatchSize: number;
  readonly holdLockOnServiceUnavailable: boolean;
  readonly maxLockObservationCacheSize: number;
  readonly safetyMargin: number | undefined;
  readonly fencingTableName: string | undefined;
  readonly allowEventuallyConsistentGlobalTable: boolean;
  readonly clockBound: { readonly maxSkew: number } | undefined;
}

/** Applies defaults and checks every option and their relations. */
/** The checks of a client's settings that need its clock or logger: refused, or warned of. */
export function checkClientSetup(settings: ResolvedSettings, clock: MonotonicClock, logger: Logger | undefined): void {
  if (settings.clockBound !== undefined && clock.wallNow === undefined) {
    throw new InvalidArgumentError('CONFLICTING_OPTIONS', 'clockBound needs a clock with wallNow(): the stamps are wall-clock times');
  }
  if (!settings.backgroundHeartbeats && settings.leaseDuration < 2 * settings.heartbeatPeriod) {
    logger?.warn({}, 'leaseDuration is less than twice heartbeatPeriod; heartbeat manually well within each lease');
  }
}

export function resolveSettings(options: LockClientSettings): ResolvedSettings {
  const leaseDuration = checkDuration('leaseDuration', options.leaseDuration ?? CLIENT_DEFAULTS.leaseDuration, { min: 1 });
  const settings: ResolvedSettings = {
    tableName: checkTableName(options.tableName),
    partitionKeyName: checkKeyName('partitionKeyName', options.partitionKeyName ?? CLIENT_DEFAULTS.partitionKeyName),
    sortKeyName: options.sortKeyName === undefined ? undefined : checkKeyName('sortKeyName', options.sortKeyName),
    ownerName: options.ownerName === undefined ? defaultOwnerName() : checkName('ownerName', options.ownerName),
    leaseDuration,
    heartbeatPeriod: checkDuration('heartbeatPeriod', options.heartbeatPeriod ?? defaultHeartbeatPeriod(leaseDuration), { min: 1 }),
    backgroundHeartbeats: checkFlag('backgroundHeartbeats', options.backgroundHeartbeats ?? CLIENT_DEFAULTS.backgroundHeartbeats),
    heartbeatConcurrency: checkCount('heartbeatConcurrency', options.heartbeatConcurrency ?? CLIENT_DEFAULTS.heartbeatConcurrency),
    heartbeatBatchSize: checkCount('heartbeatBatchSize', options.heartbeatBatchSize ?? CLIENT_DEFAULTS.heartbeatBatchSize, {
      max: MAX_BATCH_STATEMENTS,
    }),
    holdLockOnServiceUnavailable: checkFlag(
      'holdLockOnServiceUnavailable',
      options.holdLockOnServiceUnavailable ?? CLIENT_DEFAULTS.holdLockOnServiceUnavailable,
    ),
    maxLockObservationCacheSize: checkCount(
      'maxLockObservationCacheSize',
      options.maxLockObservationCacheSize ?? CLIENT_DEFAULTS.maxLockObservationCacheSize,
    ),
    safetyMargin: options.safetyMargin === undefined ? undefined : checkDuration('safetyMargin', options.safetyMargin),
    fencingTableName: options.fencingTableName === undefined ? undefined : checkTableName(options.fencingTableName, 'fencingTableName'),
    allowEventuallyConsistentGlobalTable: checkFlag(
      'allowEventuallyConsistentGlobalTable',
      options.allowEventuallyConsistentGlobalTable ?? CLIENT_DEFAULTS.allowEventuallyConsistentGlobalTable,
    ),
    clockBound: options.clockBound === undefined ? undefined : checkClockBound(options.clockBound),
  };
  if (settings.fencingTableName === settings.tableName) {
    throw new InvalidArgumentError(
      'CONFLICTING_OPTIONS',
      'fencingTableName must name a table of its own, not the lock table: Java clients would read its items as malformed locks',
    );
  }
  if (settings.fencingTableName !== undefined) checkFencingKeyNames(settings);
  if (settings.partitionKeyName === settings.sortKeyName) {
    throw new InvalidArgumentError('CONFLICTING_OPTIONS', 'partitionKeyName and sortKeyName must differ');
  }
  checkLockLease(settings.leaseDuration, settings);
  return settings;
}
