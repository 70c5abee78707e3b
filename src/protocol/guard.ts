/**
 * The lock guard of a guarded write: a ConditionCheck on the lock item that
 * passes only while the item still shows this holder's owner name, an RVN
 * this holder wrote (the last confirmed one, or one of a write whose reply
 * was lost) and no `isReleased`. It is the heartbeat's own condition, read
 * instead of written: every takeover or release by any client, Java's
 * included, changes the RVN or marks the item, and so fails it.
 */
import type { TransactWriteItem } from '@aws-sdk/client-dynamodb';
import type { LockTable } from './attributes.js';
import { heldByOwner, lockItemKey, type HeldLockState } from './requests.js';

/**
 * The guard as one item of a `TransactWriteItems` request. When it fails,
 * its cancellation reason carries the lock item as it is (`ALL_OLD`), which
 * names whoever holds the lock now.
 */
export function buildLockGuard(table: LockTable, held: HeldLockState): TransactWriteItem {
  const { condition, names, values } = heldByOwner(table, held, { refuseReleased: true });
  return {
    ConditionCheck: {
      TableName: table.tableName,
      Key: lockItemKey(table, held),
      ConditionExpression: condition,
      ExpressionAttributeNames: names,
      ExpressionAttributeValues: values,
      ReturnValuesOnConditionCheckFailure: 'ALL_OLD',
    },
  };
}
