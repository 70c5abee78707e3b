/**
 * Every error this library throws on purpose derives from {@link DynamoDBLockError}.
 * Names follow the Java client's exceptions (`LockNotGrantedException` →
 * {@link LockNotGrantedError}, …). Each class sets `name`, and the `is…` guards
 * compare `name` so they also work across two copies of this package.
 */

import { describeLockKey, type LockKey } from './lock-key.js';

/**
 * Who held a lock, as the table showed it when an operation was refused: the
 * fields of a `LockSnapshot` that say who holds it and for how long.
 */
export interface LockHolder {
  readonly ownerName: string;
  readonly recordVersionNumber: string;
  /** The lease the holder advertised, in milliseconds. */
  readonly leaseDuration: number;
  readonly isReleased: boolean;
}

export class DynamoDBLockError extends Error {
  override name = 'DynamoDBLockError';
  // eslint-disable-next-line @typescript-eslint/no-useless-constructor -- makes `message` required (Error's is optional)
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
  }
}

function describeHolder(holder: LockHolder | undefined): string {
  if (holder === undefined) return '';
  return holder.isReleased
    ? ` (last released by ${JSON.stringify(holder.ownerName)})`
    : ` (held by ${JSON.stringify(holder.ownerName)}, RVN ${holder.recordVersionNumber}, lease ${holder.leaseDuration} ms)`;
}

/** The lock could not be acquired before the acquire call's deadline. */
export class LockNotGrantedError extends DynamoDBLockError {
  override name = 'LockNotGrantedError';
  readonly partitionKey: string;
  readonly sortKey: string | undefined;
  /** The lock as last seen in the table, if it was seen. */
  readonly holder: LockHolder | undefined;
  constructor(reason: string, lock: LockKey, holder?: LockHolder, options?: { cause?: unknown }) {
    super(`Lock ${describeLockKey(lock)} not granted: ${reason}${describeHolder(holder)}`, options);
    this.partitionKey = lock.partitionKey;
    this.sortKey = lock.sortKey;
    this.holder = holder;
  }
}

/**
 * DynamoDB gave no usable answer until the acquire call's deadline: no
 * connection, no reply, throttled or a 5xx on every attempt. Nobody is known
 * to hold the lock; `cause` is the last error of the AWS SDK. A subclass of
 * {@link LockNotGrantedError} (Java throws that here too), so code that tells
 * "someone else holds it" from "DynamoDB is down" checks for this class first.
 */
export class DynamoDBUnavailableError extends LockNotGrantedError {
  override name = 'DynamoDBUnavailableError';
  /** `reason`: what DynamoDB's answers came to, for a subclass that knows better than "did not answer". */
  constructor(lock: LockKey, cause: unknown, holder?: LockHolder, reason?: string) {
    super(reason ?? `DynamoDB did not answer successfully (${describeCause(cause)})`, lock, holder, { cause });
  }
}

/**
 * DynamoDB answered the acquisition, but the winning write and each of the
 * renewals after it (three at most) took longer than the client's
 * `heartbeatPeriod`, or they left the lock no safe time: the call stops
 * renewing rather than hand over a lock whose every write arrives late.
 * The lock was released at once, and the call ends rather than renew for
 * ever. A longer `heartbeatPeriod` (and `leaseDuration`) than the round trip
 * fixes it. A subclass of {@link DynamoDBUnavailableError}: the call ended
 * on DynamoDB's answers, not on a holder it saw.
 */
export class DynamoDBTooSlowError extends DynamoDBUnavailableError {
  override name = 'DynamoDBTooSlowError';
  /** How long the last write took, from when it left to its answer, in milliseconds. */
  readonly roundTripMs: number;
  readonly heartbeatPeriodMs: number;
  constructor(lock: LockKey, roundTripMs: number, heartbeatPeriodMs: number) {
    const reason =
      `DynamoDB answered in ${Math.round(roundTripMs)} ms, longer than the heartbeat period (${heartbeatPeriodMs} ms): ` +
      'every renewal was answered as late, so the call released the lock rather than hand it over';
    super(lock, undefined, undefined, reason);
    this.roundTripMs = roundTripMs;
    this.heartbeatPeriodMs = heartbeatPeriodMs;
  }
}

/**
 * A request that only looks at locks (`getLock`, a page of a listing) got no
 * answer from DynamoDB within its bound, the client's `leaseDuration`, and
 * was abandoned so that it holds no slot for ever. Nothing was changed;
 * asking again later may succeed. `cause` is the `TimeoutError` that ended
 * the request.
 */
export class DynamoDBTimeoutError extends DynamoDBLockError {
  override name = 'DynamoDBTimeoutError';
  /** The bound, in milliseconds. */
  readonly timeout: number;
  constructor(call: string, timeout: number, cause: unknown) {
    super(`${call}: DynamoDB did not answer within ${Math.ceil(timeout)} ms; the request was abandoned`, { cause });
    this.timeout = timeout;
  }
}

function describeCause(cause: unknown): string {
  if (typeof cause !== 'object' || cause === null) return String(cause);
  const { name, message, code } = cause as { name?: unknown; message?: unknown; code?: unknown };
  const parts = [name, code, message].filter((part): part is string => typeof part === 'string' && part !== '');
  return parts.length === 0 ? 'unknown error' : [...new Set(parts)].join(': ');
}

/**
 * The lock is held by someone else and `shouldSkipBlockingWait` asked not to
 * wait. Not a subclass of {@link LockNotGrantedError}, as in Java.
 */
export class LockCurrentlyUnavailableError extends DynamoDBLockError {
  override name = 'LockCurrentlyUnavailableError';
  readonly partitionKey: string;
  readonly sortKey: string | undefined;
  readonly holder: LockHolder | undefined;
  constructor(lock: LockKey, holder?: LockHolder, options?: { cause?: unknown }) {
    super(`Lock ${describeLockKey(lock)} is currently unavailable${describeHolder(holder)}`, options);
    this.partitionKey = lock.partitionKey;
    this.sortKey = lock.sortKey;
    this.holder = holder;
  }
}

/** Whether `error` says that someone else holds the lock: an answer to the call, not a failure of DynamoDB. */
export function heldByAnother(error: unknown): error is LockNotGrantedError | LockCurrentlyUnavailableError {
  if (error instanceof DynamoDBUnavailableError) return false;
  return error instanceof LockNotGrantedError || error instanceof LockCurrentlyUnavailableError;
}

/**
 * How a held lock was lost:
 * - `taken`: another owner holds it now;
 * - `deleted`: its item is gone;
 * - `released`: it was released (by this client, or its item was marked released);
 * - `expired`: no heartbeat was confirmed within the lease minus the safety margin,
 *   so this client can no longer be sure nobody else took it;
 * - `handedOff`: this client handed it off (`lock.handOff()`), for another client to adopt;
 * - `deadline`: the safe time ended before the deadline of the process holding it
 *   (acquisition option `invocationDeadline`); its lease ends soon after that deadline.
 */
export type LockLossKind = 'taken' | 'deleted' | 'released' | 'expired' | 'handedOff' | 'deadline';

/** A lock this client held can no longer be trusted to be held. */
export class LockLostError extends DynamoDBLockError {
  override name = 'LockLostError';
  readonly partitionKey: string;
  readonly sortKey: string | undefined;
  readonly kind: LockLossKind;
  /** The item as the refused heartbeat found it, when it still exists. */
  readonly holder: LockHolder | undefined;
  constructor(kind: LockLossKind, reason: string, lock: LockKey, options?: { cause?: unknown; holder?: LockHolder }) {
    super(`Lock ${describeLockKey(lock)} is no longer held: ${reason}${describeHolder(options?.holder)}`, options);
    this.partitionKey = lock.partitionKey;
    this.sortKey = lock.sortKey;
    this.kind = kind;
    this.holder = options?.holder;
  }
}

export class LockTableDoesNotExistError extends DynamoDBLockError {
  override name = 'LockTableDoesNotExistError';
  readonly tableName: string;
  constructor(tableName: string, options?: { cause?: unknown }) {
    super(`Lock table ${JSON.stringify(tableName)} does not exist or is not active`, options);
    this.tableName = tableName;
  }
}

/**
 * `createLockTable()` found the table already there. Pass `ifNotExists: true`
 * to accept an existing table with the right key schema. `cause` is DynamoDB's
 * `ResourceInUseException`.
 */
export class LockTableAlreadyExistsError extends DynamoDBLockError {
  override name = 'LockTableAlreadyExistsError';
  readonly tableName: string;
  constructor(tableName: string, options?: { cause?: unknown }) {
    super(`Lock table ${JSON.stringify(tableName)} already exists`, options);
    this.tableName = tableName;
  }
}

/** The table's key schema differs from the client's `partitionKeyName`/`sortKeyName`; `message` names the option that does not match. */
export class LockTableSchemaMismatchError extends DynamoDBLockError {
  override name = 'LockTableSchemaMismatchError';
  readonly tableName: string;
  constructor(tableName: string, mismatch: string, options?: { cause?: unknown }) {
    super(mismatch, options);
    this.tableName = tableName;
  }
}

/** A session-monitor query on a lock acquired without `sessionMonitor`. */
export class SessionMonitorNotSetError extends DynamoDBLockError {
  override name = 'SessionMonitorNotSetError';
}

/** An item in the lock table lacks a protocol attribute or has it in the wrong type or format. */
export class MalformedLockItemError extends DynamoDBLockError {
  override name = 'MalformedLockItemError';
  /** The offending attribute. */
  readonly attribute: string;
  constructor(attribute: string, problem: string, key?: LockKey) {
    super(`Malformed lock item${key === undefined ? '' : ` ${describeLockKey(key)}`}: attribute ${JSON.stringify(attribute)} ${problem}`);
    this.attribute = attribute;
  }
}

/** Why an argument was refused. */
export type InvalidArgumentCode =
  | 'EMPTY_KEY'
  | 'KEY_TOO_LONG'
  | 'MALFORMED_KEY'
  | 'SORT_KEY_REQUIRED'
  | 'SORT_KEY_NOT_ALLOWED'
  | 'ITEM_TOO_LARGE'
  | 'RESERVED_ATTRIBUTE'
  | 'INVALID_ATTRIBUTE_VALUE'
  | 'INVALID_DURATION'
  | 'LEASE_TOO_SHORT'
  | 'INVALID_SESSION_MONITOR'
  /** `invocationDeadline` is malformed: not a finite number of milliseconds, or both or neither of its fields. */
  | 'INVALID_DEADLINE'
  /** `invocationDeadline` is past, or leaves the lock no safe time (no more than its safety margin away). */
  | 'DEADLINE_TOO_SOON'
  | 'CONFLICTING_OPTIONS'
  | 'INVALID_OPTION'
  /** `acquireLocks`: no keys, more than one transaction takes, or one key twice. */
  | 'INVALID_GROUP'
  /** `acquireLocks`: this client already holds one of the keys; a group never takes a lock it holds. */
  | 'LOCK_ALREADY_HELD';

/** An argument or option was refused before anything was sent to DynamoDB. */
export class InvalidArgumentError extends DynamoDBLockError {
  override name = 'InvalidArgumentError';
  readonly code: InvalidArgumentCode;
  constructor(code: InvalidArgumentCode, message: string) {
    super(message);
    this.code = code;
  }
}

/**
 * Why a hand-off handle was refused by `adoptLock`:
 * - `MALFORMED_HANDLE`: not a handle (not JSON, a field missing or of the wrong type);
 * - `UNSUPPORTED_VERSION`: a handle of a format version this copy of the library does not read;
 * - `OTHER_TABLE`: a handle of another lock table (or key schema) than the adopting client's;
 * - `MOVED_ON`: the lock moved on since the hand-off (another RVN or owner, released, or gone).
 */
export type LockHandOffErrorCode = 'MALFORMED_HANDLE' | 'UNSUPPORTED_VERSION' | 'OTHER_TABLE' | 'MOVED_ON';

/** A hand-off handle that cannot be adopted; nothing is held. `holder` names who holds the lock after `MOVED_ON`. */
export class LockHandOffError extends DynamoDBLockError {
  override name = 'LockHandOffError';
  readonly code: LockHandOffErrorCode;
  /** The lock as the refused adoption found it; none when the item is gone or the handle was refused unsent. */
  readonly holder: LockHolder | undefined;
  constructor(code: LockHandOffErrorCode, reason: string, options?: { cause?: unknown; holder?: LockHolder | undefined }) {
    super(`Lock hand-off refused: ${reason}${describeHolder(options?.holder)}`, options);
    this.code = code;
    this.holder = options?.holder;
  }
}

/** The client was closed; it takes no new work. */
export class LockClientClosedError extends DynamoDBLockError {
  override name = 'LockClientClosedError';
  constructor() {
    super('The lock client is closed');
  }
}

/** `close()` could not release every lock; `errors` holds one entry per failure. */
export class LockClientCloseError extends DynamoDBLockError {
  override name = 'LockClientCloseError';
  readonly errors: readonly unknown[];
  constructor(errors: readonly unknown[]) {
    super(`close() failed to release ${errors.length} lock(s)`, { cause: errors[0] });
    this.errors = errors;
  }
}

/**
 * A guard that knows errors by `name`, which every class here sets: unlike
 * `instanceof`, it also recognises an error thrown by another copy of this
 * package in the same process, whose classes are other objects.
 */
// eslint-disable-next-line @typescript-eslint/no-unnecessary-type-parameters -- T names the class the names stand for; no name can be checked against it
export function guardByName<T extends Error>(...names: readonly string[]): (error: unknown) => error is T {
  return (error: unknown): error is T => error instanceof Error && names.includes(error.name);
}

/** The `name` of every error class this library throws on purpose, those of other modules included. */
const LIBRARY_ERROR_NAMES: readonly string[] = [
  'DynamoDBLockError',
  'LockNotGrantedError',
  'DynamoDBUnavailableError',
  'DynamoDBTooSlowError',
  'DynamoDBTimeoutError',
  'LockCurrentlyUnavailableError',
  'LockLostError',
  'LockTableDoesNotExistError',
  'LockTableAlreadyExistsError',
  'LockTableSchemaMismatchError',
  'SessionMonitorNotSetError',
  'MalformedLockItemError',
  'InvalidArgumentError',
  'LockClientClosedError',
  'LockClientCloseError',
  'GuardedWriteCanceledError',
  'GuardedWriteOutcomeUnknownError',
  'AlreadyCampaigningError',
  'LockTableReplicationError',
  'SemaphorePermitsMismatchError',
  'LockHandOffError',
];

/** Any error this library throws on purpose. */
export const isDynamoDBLockError = guardByName<DynamoDBLockError>(...LIBRARY_ERROR_NAMES);
/** Also true for its subclasses {@link DynamoDBUnavailableError} and {@link DynamoDBTooSlowError}. */
export const isLockNotGrantedError = guardByName<LockNotGrantedError>('LockNotGrantedError', 'DynamoDBUnavailableError', 'DynamoDBTooSlowError');
export const isDynamoDBUnavailableError = guardByName<DynamoDBUnavailableError>('DynamoDBUnavailableError', 'DynamoDBTooSlowError');
export const isDynamoDBTooSlowError = guardByName<DynamoDBTooSlowError>('DynamoDBTooSlowError');
export const isDynamoDBTimeoutError = guardByName<DynamoDBTimeoutError>('DynamoDBTimeoutError');
export const isLockCurrentlyUnavailableError = guardByName<LockCurrentlyUnavailableError>('LockCurrentlyUnavailableError');
export const isLockLostError = guardByName<LockLostError>('LockLostError');
export const isLockTableDoesNotExistError = guardByName<LockTableDoesNotExistError>('LockTableDoesNotExistError');
export const isLockTableAlreadyExistsError = guardByName<LockTableAlreadyExistsError>('LockTableAlreadyExistsError');
export const isLockTableSchemaMismatchError = guardByName<LockTableSchemaMismatchError>('LockTableSchemaMismatchError');
export const isSessionMonitorNotSetError = guardByName<SessionMonitorNotSetError>('SessionMonitorNotSetError');
export const isMalformedLockItemError = guardByName<MalformedLockItemError>('MalformedLockItemError');
export const isInvalidArgumentError = guardByName<InvalidArgumentError>('InvalidArgumentError');
export const isLockClientClosedError = guardByName<LockClientClosedError>('LockClientClosedError');
export const isLockClientCloseError = guardByName<LockClientCloseError>('LockClientCloseError');
export const isLockHandOffError = guardByName<LockHandOffError>('LockHandOffError');
