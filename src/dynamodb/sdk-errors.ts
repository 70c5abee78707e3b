/**
 * Sorting the errors of the AWS SDK into what the lock logic acts on.
 * The SDK's error classes are matched by `name`, which survives duplicate
 * copies of the SDK in one process.
 */
import type { AttributeValue } from '@aws-sdk/client-dynamodb';

interface CancellationReason {
  Code?: string;
  Item?: Record<string, AttributeValue>;
}

interface ServiceErrorShape {
  name?: string;
  $metadata?: { httpStatusCode?: number };
  Item?: Record<string, AttributeValue>;
  CancellationReasons?: CancellationReason[];
}

const shape = (error: unknown): ServiceErrorShape =>
  typeof error === 'object' && error !== null ? (error as ServiceErrorShape) : {};

const THROTTLING = new Set([
  'ProvisionedThroughputExceededException',
  'ThrottlingException',
  'RequestLimitExceeded',
]);

const CLIENT_SIDE_NAMES = new Set(['TimeoutError', 'RequestTimeout', 'NetworkingError']);
const CLIENT_SIDE_CODES = new Set(['ECONNRESET', 'ECONNREFUSED', 'EPIPE', 'ETIMEDOUT', 'EAI_AGAIN', 'ENOTFOUND', 'EHOSTUNREACH', 'ECONNABORTED']);

/**
 * The lock item's reason in a canceled transaction of ours: every transaction
 * this library sends (a fenced acquisition, a guarded write) puts the lock
 * item first.
 */
function lockItemReason(error: unknown): CancellationReason | undefined {
  const { name, CancellationReasons } = shape(error);
  return name === 'TransactionCanceledException' ? CancellationReasons?.[0] : undefined;
}

/** A lock write's condition failed: alone, or as the lock item of a transaction of ours. */
export function isConditionalCheckFailed(error: unknown): boolean {
  return shape(error).name === 'ConditionalCheckFailedException' || lockItemReason(error)?.Code === 'ConditionalCheckFailed';
}

/** The lock item as it was when its condition failed (requests sent with `ReturnValuesOnConditionCheckFailure: ALL_OLD`). */
export function itemOfFailedCondition(error: unknown): Record<string, AttributeValue> | undefined {
  if (shape(error).name === 'ConditionalCheckFailedException') return shape(error).Item;
  const reason = lockItemReason(error);
  return reason?.Code === 'ConditionalCheckFailed' ? reason.Item : undefined;
}

/** Reasons for which a transaction of ours may succeed if the lock is read and written again. */
const RACE_CODES = new Set(['None', 'TransactionConflict', 'ConditionalCheckFailed', 'ThrottlingError', 'ProvisionedThroughputExceeded']);

/**
 * A transaction of ours was canceled although the lock item's own condition
 * held: another write of one of its items was under way, an item other than
 * the lock's failed its condition (a fencing counter that moved since it was
 * read), or it was throttled. Nothing was applied.
 */
export function isTransactionRace(error: unknown): boolean {
  const { name, CancellationReasons } = shape(error);
  return (
    name === 'TransactionCanceledException' &&
    lockItemReason(error)?.Code !== 'ConditionalCheckFailed' &&
    (CancellationReasons ?? []).every((reason) => RACE_CODES.has(reason.Code ?? 'None'))
  );
}

export function isResourceNotFound(error: unknown): boolean {
  return shape(error).name === 'ResourceNotFoundException';
}

export function isValidationError(error: unknown): boolean {
  return shape(error).name === 'ValidationException';
}

export function isThrottling(error: unknown): boolean {
  return THROTTLING.has(shape(error).name ?? '');
}

export function httpStatusOf(error: unknown): number | undefined {
  return shape(error).$metadata?.httpStatusCode;
}

/** No answer came from DynamoDB: the request may or may not have been applied. */
export function isClientSideError(error: unknown): boolean {
  // Duck-typed, not `instanceof Error`: errors from Node's sockets may come from another realm.
  if (typeof error !== 'object' || error === null) return false;
  const { code, name } = error as { code?: unknown; name?: unknown };
  if (typeof code === 'string' && CLIENT_SIDE_CODES.has(code)) return true;
  if (typeof name === 'string' && CLIENT_SIDE_NAMES.has(name)) return true;
  // The SDK stamps $metadata on everything it throws; without an HTTP status no answer came back.
  const metadata = (error as ServiceErrorShape).$metadata;
  return metadata !== undefined && metadata.httpStatusCode === undefined;
}

const NEVER_SENT_CODES = new Set(['ECONNREFUSED', 'ENOTFOUND', 'EAI_AGAIN', 'EHOSTUNREACH']);

/** The request certainly never reached DynamoDB (no connection could be made). */
export function wasNeverSent(error: unknown): boolean {
  const code = typeof error === 'object' && error !== null ? (error as { code?: unknown }).code : undefined;
  return typeof code === 'string' && NEVER_SENT_CODES.has(code);
}

/** Worth trying again later: throttled, a 5xx answer, or no answer at all. */
export function isTransient(error: unknown): boolean {
  const status = httpStatusOf(error);
  return isThrottling(error) || (status !== undefined && status >= 500) || isClientSideError(error);
}
