/**
 * The acquire loop of the Java client (PROTOCOL.md §5): read the lock
 * consistently, take it when it is absent or released, and take it over only
 * after its RVN stayed unchanged for its whole lease on this process's
 * monotonic clock.
 */
import type { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { randomUUID } from 'node:crypto';
import type { Logger } from 'pino';
import { abortableSleep } from './abortable-sleep.js';
import { toBytes } from './bytes.js';
import type { MonotonicClock } from './clock.js';
import {
  isClientSideError,
  isConditionalCheckFailed,
  isThrottling,
  httpStatusOf,
  itemOfFailedCondition,
} from './dynamodb-errors.js';
import {
  InvalidArgumentError,
  LockCurrentlyUnavailableError,
  LockNotGrantedError,
  isMalformedLockItemError,
  type LockHolder,
} from './errors.js';
import { lockId } from './held-lock.js';
import { holderOf } from './lock-holder.js';
import type { LockObservationCache } from './observation-cache.js';
import { ACQUIRE_DEFAULTS, checkDuration, checkLockLease } from './options.js';
import {
  buildAcquireRequest,
  decodeLockItem,
  encodeAdditionalAttributes,
  validateItemSize,
  validateLockKey,
  withOldItemOnConditionFailure,
  encodeLockItem,
  type AcquisitionPath,
  type AdditionalAttributes,
  type LockItem,
  type LockKey,
  type LockRecord,
  type LockRecordToWrite,
  type LockTable,
} from './protocol/index.js';
import { readLock, type LockSighting } from './read-lock.js';
import { sendWrite } from './send-write.js';

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
  readonly dynamoDB: Pick<DynamoDBClient, 'send'>;
  readonly table: LockTable;
  readonly ownerName: string;
  readonly defaultLeaseDuration: number;
  readonly heartbeatPeriod: number;
  readonly backgroundHeartbeats: boolean;
  /** The client's `safetyMargin` option, if set. */
  readonly safetyMargin: number | undefined;
  readonly clock: MonotonicClock;
  readonly observations: LockObservationCache;
  readonly logger: Logger | undefined;
  /** Maps errors about the table itself to typed errors. */
  readonly explain: (error: unknown) => Promise<unknown>;
}

/** A successful acquisition write. */
export interface Acquisition {
  readonly record: LockRecordToWrite;
  /** Monotonic time just before the write was sent. */
  readonly lookupTime: number;
  readonly additionalAttributes: LockItem;
}



/** Checks everything about the call that can be checked without DynamoDB. */
export function validateAcquireOptions(
  ctx: Pick<AcquireContext, 'table' | 'heartbeatPeriod' | 'backgroundHeartbeats' | 'safetyMargin' | 'defaultLeaseDuration' | 'ownerName'>,
  key: LockKey, options: AcquireLockOptions): void {
  validateLockKey(ctx.table, key);
  if (options.refreshPeriod !== undefined) checkDuration('refreshPeriod', options.refreshPeriod);
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

/** The holder named by a failed condition's returned item, if it can be read. */
function holderFromFailedCondition(ctx: AcquireContext, error: unknown): LockHolder | undefined {
  const item = itemOfFailedCondition(error);
  if (item === undefined) return undefined;
  try {
    return holderOf(decodeLockItem(ctx.table, item));
  } catch {
    return undefined;
  }
}

/** Thrown inside one iteration when that attempt failed but a later one may succeed before the deadline. */
class RetryableRefusal extends Error {
  constructor(readonly refusal: LockNotGrantedError) {
    super(refusal.message);
  }
}

/** Runs the acquire loop until a write succeeds or the call's deadline passes. */
export async function acquire(ctx: AcquireContext, key: LockKey, options: AcquireLockOptions): Promise<Acquisition> {
  const { clock, table, signal } = { ...ctx, signal: options.signal };
  const refreshMs = options.refreshPeriod ?? ACQUIRE_DEFAULTS.refreshPeriod;
  const leaseDurationMs = options.leaseDuration ?? ctx.defaultLeaseDuration;
  const replaceData = options.replaceData ?? ACQUIRE_DEFAULTS.replaceData;
  const id = lockId(key);
  const additionalAttributes = encodeAdditionalAttributes(options.additionalAttributes ?? {});
  const newData = toBytes(options.data);

  let budgetMs = options.additionalTimeToWaitForLock ?? ACQUIRE_DEFAULTS.additionalTimeToWaitForLock;
  let leaseAdded = false;
  let watched: LockSighting | undefined;
  let lastHolder: LockHolder | undefined;
  const start = clock.now();

  for (;;) {
    signal?.throwIfAborted();
    let refusal: LockNotGrantedError | undefined;
    try {
      const existing = await readLock(ctx.dynamoDB, table, key, clock, signal);
      if (existing !== undefined) lastHolder = holderOf(existing.record);
      if (options.acquireOnlyIfLockAlreadyExists && existing === undefined) {
        throw new RetryableRefusal(new LockNotGrantedError('Lock does not exist.', key));
      }

      let knownExpired = false;
      if (options.shouldSkipBlockingWait && existing !== undefined && !existing.record.isReleased) {
        const { recordVersionNumber, leaseDurationMs: lease } = existing.record;
        knownExpired = ctx.observations.isStale(id, recordVersionNumber, lease);
        if (!knownExpired) throw new LockCurrentlyUnavailableError(key, holderOf(existing.record));
        watched = existing;
      }

      const carriedData = !replaceData && existing?.record.data !== undefined ? existing.record.data : newData;
      const record: LockRecordToWrite = {
        ...key,
        ownerName: ctx.ownerName,
        leaseDurationMs,
        recordVersionNumber: randomUUID(),
        data: carriedData,
        additionalAttributes: options.additionalAttributes ?? {},
      };
      const write = (path: AcquisitionPath) => writeLock(ctx, record, path, options, additionalAttributes);

      if (existing === undefined) return await write({ kind: 'absent' });
      if (existing.record.isReleased) {
        return await write({
          kind: 'released',
          readRecordVersionNumber: options.acquireReleasedLocksConsistently ? existing.record.recordVersionNumber : undefined,
        });
      }
      if (watched === undefined) {
        watched = existing;
        if (!leaseAdded) {
          leaseAdded = true;
          budgetMs += existing.record.leaseDurationMs;
        }
      } else if (watched.record.recordVersionNumber === existing.record.recordVersionNumber) {
        const unchangedFor = clock.now() - watched.lookupTime;
        if (knownExpired || unchangedFor > watched.record.leaseDurationMs) {
          return await write({ kind: 'expired', watchedRecordVersionNumber: watched.record.recordVersionNumber });
        }
      } else {
        // The holder heartbeated: time the new RVN from the read that showed it.
        watched = existing;
      }
    } catch (error) {
      if (signal?.aborted) throw signal.reason;
      if (error instanceof RetryableRefusal) {
        refusal = error.refusal;
      } else if (isConditionalCheckFailed(error)) {
        const holder = holderFromFailedCondition(ctx, error) ?? lastHolder;
        if (options.shouldSkipBlockingWait) throw new LockCurrentlyUnavailableError(key, holder, { cause: error });
        refusal = new LockNotGrantedError('another client acquired it first', key, holder, { cause: error });
      } else if (isThrottling(error) || isClientSideError(error) || (httpStatusOf(error) ?? 0) >= 500) {
        ctx.logger?.warn({ err: error, partitionKey: key.partitionKey, sortKey: key.sortKey }, 'lock acquisition attempt failed; retrying');
        refusal = new LockNotGrantedError('DynamoDB did not answer successfully', key, lastHolder, { cause: error });
      } else if (isMalformedLockItemError(error) || error instanceof LockCurrentlyUnavailableError || error instanceof InvalidArgumentError) {
        throw error;
      } else {
        throw await ctx.explain(error);
      }
    }
    const elapsed = clock.now() - start;
    if (elapsed > budgetMs) {
      throw refusal ?? new LockNotGrantedError(`Didn't acquire lock after sleeping for ${Math.round(elapsed)} milliseconds`, key, lastHolder);
    }
    await abortableSleep(refreshMs, signal);
  }
}

async function writeLock(
  ctx: AcquireContext,
  record: LockRecordToWrite,
  path: AcquisitionPath,
  options: AcquireLockOptions,
  additionalAttributes: LockItem,
): Promise<Acquisition> {
  const request = withOldItemOnConditionFailure(
    buildAcquireRequest(ctx.table, record, path, { updateExistingLockRecord: options.updateExistingLockRecord }),
  );
  // Stamped before sending: the lease counts from the earliest moment the write can have taken effect.
  const lookupTime = ctx.clock.now();
  // Not abortable: a write cut off mid-flight may still have taken the lock.
  await sendWrite(ctx.dynamoDB, request);
  ctx.observations.forget(lockId(record));
  return { record, lookupTime, additionalAttributes };
}
