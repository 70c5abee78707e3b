/**
 * Sorting the errors of the AWS SDK into what the lock logic acts on.
 * The SDK's error classes are matched by `name`, which survives duplicate
 * copies of the SDK in one process.
 */
import type { AttributeValue } from '@aws-sdk/client-dynamodb';

interface ServiceErrorShape {
  name?: string;
  $metadata?: { httpStatusCode?: number };
  Item?: Record<string, AttributeValue>;
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

export function isConditionalCheckFailed(error: unknown): boolean {
  return shape(error).name === 'ConditionalCheckFailedException';
}

/** The item as it was when a condition failed (requests sent with `ReturnValuesOnConditionCheckFailure: ALL_OLD`). */
export function itemOfFailedCondition(error: unknown): Record<string, AttributeValue> | undefined {
  return isConditionalCheckFailed(error) ? shape(error).Item : undefined;
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
