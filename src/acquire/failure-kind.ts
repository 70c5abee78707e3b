/**
 * What a failed request of an acquisition means for the acquisition: the one
 * place acquisition code asks the SDK-error predicates (dynamodb/sdk-errors.ts).
 * The single loop (failed-step.ts) and the group loop (group-acquire.ts) act
 * on its answer, each in its own way.
 */
import { DynamoDBTimeoutError, InvalidArgumentError, LockCurrentlyUnavailableError, isMalformedLockItemError } from '../base/errors.js';
import { LockTableReplicationError } from '../base/lock-table-replication-error.js';
import {
  httpStatusOf,
  isClientSideError,
  isConditionalCheckFailed,
  isGroupRace,
  isThrottling,
  isTransactionConflict,
  isTransactionRace,
} from '../dynamodb/sdk-errors.js';

export type FailureKind =
  /** The lock write's condition failed: the item it returned (ALL_OLD, if any) is what the table holds. */
  | 'refused'
  /**
   * A transaction of ours was canceled for races only, or the item is part
   * of another transaction under way: nothing was applied; read again.
   */
  | 'race'
  /** Throttled, unanswered, a server error or a request timed out: worth trying again before the deadline. */
  | 'transient'
  /** A typed error of the call itself (a malformed item, a bad argument, the table's replication): it ends the call as it is. */
  | 'final'
  /** Anything else, most likely about the table itself: it ends the call, explained (dynamodb/lock-table.ts). */
  | 'unexplained';

/**
 * Sorts `error`, the failure of a request of a single acquisition (`one`)
 * or of a group's (`group`, whose transaction counts any lock's failed
 * condition as a race: someone wrote it since it was read).
 */
export function kindOfFailure(error: unknown, acquisition: 'one' | 'group'): FailureKind {
  if (isTransactionConflict(error) || (acquisition === 'group' ? isGroupRace(error) : isTransactionRace(error))) return 'race';
  if (acquisition === 'one' && isConditionalCheckFailed(error)) return 'refused';
  if (isThrottling(error) || isClientSideError(error) || (httpStatusOf(error) ?? 0) >= 500 || error instanceof DynamoDBTimeoutError) {
    return 'transient';
  }
  if (
    isMalformedLockItemError(error) ||
    error instanceof LockCurrentlyUnavailableError ||
    error instanceof InvalidArgumentError ||
    error instanceof LockTableReplicationError
  ) {
    return 'final';
  }
  return 'unexplained';
}
