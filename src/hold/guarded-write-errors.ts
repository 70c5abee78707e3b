/**
 * The errors of a guarded write (`lock.transactWrite`) that leave the lock
 * held: DynamoDB canceled the transaction for a reason of the caller's items,
 * or nobody can tell whether it committed. A guard refused because the lock
 * moved is a {@link LockLostError} instead.
 */
import type { AttributeValue } from '@aws-sdk/client-dynamodb';
import { isFailedConditionCode, isRetryableCancellation } from '../dynamodb/sdk-errors.js';
import { DynamoDBLockError, guardByName } from '../base/errors.js';
import type { LockKey } from '../base/lock-key.js';

/** Why DynamoDB canceled one item of a guarded write. */
export interface GuardedWriteCancellation {
  /** The item's index in the array given to `transactWrite`. */
  readonly index: number;
  /** DynamoDB's code, e.g. `ConditionalCheckFailed`, `TransactionConflict`, `ValidationError`. */
  readonly code: string;
  readonly message: string | undefined;
  /** The item as it was, for an item sent with `ReturnValuesOnConditionCheckFailure: 'ALL_OLD'`. */
  readonly item: Record<string, AttributeValue> | undefined;
}

function describeCancellations(cancellations: readonly GuardedWriteCancellation[], lockReason: string | undefined): string {
  const parts = cancellations.map((c) => `item ${c.index}: ${c.code}${c.message === undefined ? '' : ` (${c.message})`}`);
  if (lockReason !== undefined) parts.push(`the lock's own check: ${lockReason}`);
  return parts.join('; ');
}

/**
 * DynamoDB canceled a guarded write, and nothing of it was applied; the
 * lock's own check did not fail, so the lock is still held. `cancellations`
 * names each item that failed, by its index in the array given to
 * `transactWrite`: most often `ConditionalCheckFailed`, one of the caller's
 * own conditions.
 */
export class GuardedWriteCanceledError extends DynamoDBLockError {
  override name = 'GuardedWriteCanceledError';
  readonly partitionKey: string;
  readonly sortKey: string | undefined;
  /** The caller's items that DynamoDB gave a reason for, in index order. */
  readonly cancellations: readonly GuardedWriteCancellation[];
  /**
   * The code of the lock's own check when it was the one canceled without
   * failing (`TransactionConflict`: another write to the lock item was under
   * way); `undefined` when it passed.
   */
  readonly lockCheckCode: string | undefined;
  /** True when only conflicts or throttling canceled it: the same write may succeed if sent again. */
  readonly retryable: boolean;
  constructor(
    lock: LockKey,
    cancellations: readonly GuardedWriteCancellation[],
    lockCheckCode: string | undefined,
    options?: { cause?: unknown },
  ) {
    super(
      `Guarded write under lock ${JSON.stringify(lock.partitionKey)} was canceled, nothing was applied (${describeCancellations(cancellations, lockCheckCode)})`,
      options,
    );
    this.partitionKey = lock.partitionKey;
    this.sortKey = lock.sortKey;
    this.cancellations = cancellations;
    this.lockCheckCode = lockCheckCode;
    const codes = [...cancellations.map((c) => c.code), ...(lockCheckCode === undefined ? [] : [lockCheckCode])];
    this.retryable = codes.length > 0 && codes.every(isRetryableCancellation);
  }

  /** Indices of the items whose own condition failed. */
  get failedConditions(): number[] {
    return this.cancellations.filter((c) => isFailedConditionCode(c.code)).map((c) => c.index);
  }
}

/**
 * A guarded write got no definite answer (no reply, a 5xx, cut off by its
 * signal, or an error after the AWS SDK had already sent it more than once):
 * it may have committed, whole, or not at all. The lock is still held.
 * Read the items to learn which; sending the same write again may apply it twice.
 */
export class GuardedWriteOutcomeUnknownError extends DynamoDBLockError {
  override name = 'GuardedWriteOutcomeUnknownError';
  readonly partitionKey: string;
  readonly sortKey: string | undefined;
  constructor(lock: LockKey, cause: unknown) {
    super(`Guarded write under lock ${JSON.stringify(lock.partitionKey)} may or may not have committed: DynamoDB gave no definite answer`, {
      cause,
    });
    this.partitionKey = lock.partitionKey;
    this.sortKey = lock.sortKey;
  }
}

export const isGuardedWriteCanceledError = guardByName<GuardedWriteCanceledError>('GuardedWriteCanceledError');
export const isGuardedWriteOutcomeUnknownError = guardByName<GuardedWriteOutcomeUnknownError>('GuardedWriteOutcomeUnknownError');
