/**
 * Sorting the errors of the AWS SDK into what the lock logic acts on: the
 * one place that reads an SDK error's `name`, HTTP status, attempt count or
 * cancellation reasons. The SDK's error classes are matched by `name`, which
 * survives duplicate copies of the SDK in one process.
 */
import type { AttributeValue } from '@aws-sdk/client-dynamodb';
import { itemOrNone } from '../protocol/index.js';

/** Why DynamoDB canceled one item of a transaction (`TransactionCanceledException.CancellationReasons`). */
export interface CancellationReason {
  /** `None` for an item that did not cause the cancellation. */
  readonly Code?: string;
  readonly Message?: string;
  /** The item as it was, for an item sent with `ReturnValuesOnConditionCheckFailure: 'ALL_OLD'`. */
  readonly Item?: Record<string, AttributeValue>;
}

interface ServiceErrorShape {
  name?: string;
  $metadata?: { httpStatusCode?: number; attempts?: unknown };
  Item?: Record<string, AttributeValue>;
  CancellationReasons?: CancellationReason[];
}

const shape = (error: unknown): ServiceErrorShape => (typeof error === 'object' && error !== null ? error : {});

const THROTTLING = new Set(['ProvisionedThroughputExceededException', 'ThrottlingException', 'RequestLimitExceeded']);

const CLIENT_SIDE_NAMES = new Set(['TimeoutError', 'RequestTimeout', 'NetworkingError']);
const CLIENT_SIDE_CODES = new Set([
  'ECONNRESET',
  'ECONNREFUSED',
  'EPIPE',
  'ETIMEDOUT',
  'EAI_AGAIN',
  'ENOTFOUND',
  'EHOSTUNREACH',
  'ECONNABORTED',
]);

/**
 * The SDK exception each `BatchStatementError` code of a BatchExecuteStatement
 * stands for, and the HTTP status DynamoDB answers it with, so that a failed
 * statement is sorted as the matching single call's failure would be.
 */
const EXCEPTION_OF_STATEMENT_CODE: Readonly<Record<string, { readonly name: string; readonly httpStatusCode: number }>> = Object.freeze({
  ConditionalCheckFailed: { name: 'ConditionalCheckFailedException', httpStatusCode: 400 },
  ProvisionedThroughputExceeded: { name: 'ProvisionedThroughputExceededException', httpStatusCode: 400 },
  ThrottlingError: { name: 'ThrottlingException', httpStatusCode: 400 },
  RequestLimitExceeded: { name: 'RequestLimitExceeded', httpStatusCode: 400 },
  TransactionConflict: { name: 'TransactionConflictException', httpStatusCode: 400 },
  ResourceNotFound: { name: 'ResourceNotFoundException', httpStatusCode: 400 },
  AccessDenied: { name: 'AccessDeniedException', httpStatusCode: 400 },
  ValidationError: { name: 'ValidationException', httpStatusCode: 400 },
  DuplicateItem: { name: 'DuplicateItemException', httpStatusCode: 400 },
  ItemCollectionSizeLimitExceeded: { name: 'ItemCollectionSizeLimitExceededException', httpStatusCode: 400 },
  InternalServerError: { name: 'InternalServerError', httpStatusCode: 500 },
});

/**
 * The exception a single call would have thrown for a batch statement's
 * error code. An unknown code is taken as a server error: the statement may
 * have been applied.
 */
export function exceptionOfStatementCode(code: string): { readonly name: string; readonly httpStatusCode: number } {
  return EXCEPTION_OF_STATEMENT_CODE[code] ?? { name: code, httpStatusCode: 500 };
}

/** A transaction was canceled: nothing of it was applied, even after SDK retries (they share its ClientRequestToken). */
export function isTransactionCanceled(error: unknown): boolean {
  return shape(error).name === 'TransactionCanceledException';
}

/** Why each item of a canceled transaction was canceled, in the order sent; `undefined` unless {@link isTransactionCanceled}. */
export function cancellationReasonsOf(error: unknown): readonly CancellationReason[] | undefined {
  return isTransactionCanceled(error) ? (shape(error).CancellationReasons ?? []) : undefined;
}

/**
 * The lock item's reason in a canceled transaction of ours: every transaction
 * this library sends (a fenced acquisition, a guarded write) puts the lock
 * item first.
 */
function lockItemReason(error: unknown): CancellationReason | undefined {
  return cancellationReasonsOf(error)?.[0];
}

/** A lock write's condition failed: alone, or as the lock item of a transaction of ours. */
export function isConditionalCheckFailed(error: unknown): boolean {
  return shape(error).name === 'ConditionalCheckFailedException' || lockItemReason(error)?.Code === 'ConditionalCheckFailed';
}

/**
 * The lock item as it was when its condition failed (requests sent with
 * `ReturnValuesOnConditionCheckFailure: ALL_OLD`); `undefined` when there was none.
 */
export function itemOfFailedCondition(error: unknown): Record<string, AttributeValue> | undefined {
  if (shape(error).name === 'ConditionalCheckFailedException') return itemOrNone(shape(error).Item);
  const reason = lockItemReason(error);
  return reason?.Code === 'ConditionalCheckFailed' ? itemOrNone(reason.Item) : undefined;
}

/** Cancellation codes after which the same transaction may succeed when sent again: a conflict or throttling. */
const RETRYABLE_CANCELLATION_CODES = new Set(['TransactionConflict', 'ThrottlingError', 'ProvisionedThroughputExceeded']);

/** A cancellation reason for which the same transaction may succeed when sent again. */
export function isRetryableCancellation(code: string | undefined): boolean {
  return RETRYABLE_CANCELLATION_CODES.has(code ?? '');
}

/** The code DynamoDB gives an item whose own condition failed. */
export function isFailedConditionCode(code: string | undefined): boolean {
  return code === 'ConditionalCheckFailed';
}

/** The code DynamoDB gives an item that played no part in a cancellation. */
export function isNoCancellationCode(code: string | undefined): boolean {
  return code === undefined || code === 'None';
}

/** Reasons for which a transaction of ours may succeed if the lock is read and written again. */
const isRaceCode = (code: string | undefined): boolean =>
  isNoCancellationCode(code) || isFailedConditionCode(code) || isRetryableCancellation(code);

/**
 * A transaction of ours was canceled although the lock item's own condition
 * held: another write of one of its items was under way, an item other than
 * the lock's failed its condition (a fencing counter that moved since it was
 * read), or it was throttled. Nothing was applied.
 */
export function isTransactionRace(error: unknown): boolean {
  const reasons = cancellationReasonsOf(error);
  return reasons !== undefined && !isFailedConditionCode(reasons[0]?.Code) && reasons.every((reason) => isRaceCode(reason.Code));
}

/**
 * A group acquisition's transaction was canceled for races only: some lock's
 * condition failed (someone else wrote it since it was read), a counter
 * moved, another write was under way, or it was throttled. Nothing was
 * applied, and the locks read again may be taken.
 */
export function isGroupRace(error: unknown): boolean {
  const reasons = cancellationReasonsOf(error);
  return reasons !== undefined && reasons.every((reason) => isRaceCode(reason.Code));
}

/**
 * The item is part of a transaction under way (a guarded write of its
 * holder's, say): nothing was applied, and the same write may succeed once
 * that transaction ends. Contention, like throttling; the SDK does not retry it.
 */
export function isTransactionConflict(error: unknown): boolean {
  return shape(error).name === 'TransactionConflictException';
}

export function isResourceNotFound(error: unknown): boolean {
  return shape(error).name === 'ResourceNotFoundException';
}

/** `CreateTable` found the table there already. */
export function isResourceInUse(error: unknown): boolean {
  return shape(error).name === 'ResourceInUseException';
}

export function isValidationError(error: unknown): boolean {
  return shape(error).name === 'ValidationException';
}

/**
 * DynamoDB refused a PartiQL call as such, not one of its statements: no
 * `dynamodb:PartiQLUpdate` (or, for new locks, `dynamodb:PartiQLInsert`)
 * permission, a DynamoDB without PartiQL, or a statement form it does not
 * take. Nothing was applied.
 */
export function refusesPartiQL(error: unknown): boolean {
  const name = shape(error).name;
  return name === 'AccessDeniedException' || name === 'UnknownOperationException' || isValidationError(error);
}

/** IAM refused the call: the caller lacks the permission for it. */
export function isAccessDenied(error: unknown): boolean {
  return shape(error).name === 'AccessDeniedException';
}

/** The AWS credentials are missing, unknown to AWS, or do not sign the request. */
export function isCredentialsError(error: unknown): boolean {
  const name = shape(error).name;
  return name === 'CredentialsProviderError' || name === 'UnrecognizedClientException' || name === 'InvalidSignatureException';
}

export function isThrottling(error: unknown): boolean {
  return THROTTLING.has(shape(error).name ?? '');
}

export function httpStatusOf(error: unknown): number | undefined {
  return shape(error).$metadata?.httpStatusCode;
}

/** DynamoDB answered with a 4xx: it refused the request and applied none of it (unless an earlier attempt was). */
export function isRefusedByDynamoDB(error: unknown): boolean {
  return isRefusalStatus(httpStatusOf(error));
}

/** An HTTP status with which DynamoDB refuses a request, applying none of it. */
export function isRefusalStatus(status: number | undefined): boolean {
  return status !== undefined && status >= 400 && status < 500;
}

/** How many times the SDK sent the request; `undefined` when it did not say. */
export function attemptsOf(error: unknown): number | undefined {
  const attempts = shape(error).$metadata?.attempts;
  return typeof attempts === 'number' ? attempts : undefined;
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

/** Worth trying again later: throttled, met a transaction under way, a 5xx answer, or no answer at all. */
export function isTransient(error: unknown): boolean {
  const status = httpStatusOf(error);
  return isThrottling(error) || isTransactionConflict(error) || (status !== undefined && status >= 500) || isClientSideError(error);
}
