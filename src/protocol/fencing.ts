/**
 * Fencing tokens (our extension; Java clients never read or write any of
 * this): a counter per lock key in a table of its own, the fencing table,
 * with the lock table's key schema. Each acquisition by a fencing client
 * sets the counter to the value it read plus one, conditioned on that value,
 * in the same TransactWriteItems call as the acquisition write, so the
 * counter moves exactly when such an acquisition commits, and every one of
 * them gets a number larger than all before it.
 *
 * The counter lives outside the lock table on purpose: an item of another
 * shape in the lock table would be a malformed lock to every Java client's
 * `getAllLocks` (and to ours), and an attribute on the lock item would be
 * dropped by Java's PutItem acquisitions (PROTOCOL.md §9.1 item 9).
 */
import type { AttributeValue, GetItemCommandInput, TransactWriteItem } from '@aws-sdk/client-dynamodb';
import type { LockKey } from '../base/lock-key.js';
import type { LockTable } from './attributes.js';
import { lockItemKey, type LockWriteRequest } from './requests.js';

/** Attributes of a fencing item besides the lock's key attributes. */
export const FencingAttribute = Object.freeze({
  /** The token of the newest acquisition by a fencing client (type `N`). */
  fencingToken: 'fencingToken',
  /** Who made it, and the RVN it wrote: for people reading the table. */
  ownerName: 'ownerName',
  recordVersionNumber: 'recordVersionNumber',
});

/** The consistent read of a lock's fencing item. */
export function buildFencingReadRequest(fencingTable: LockTable, key: LockKey): GetItemCommandInput {
  return { TableName: fencingTable.tableName, Key: lockItemKey(fencingTable, key), ConsistentRead: true };
}

/** The token a fencing item holds; `undefined` when there is no item (no fenced acquisition yet). */
export function fencingTokenOf(item: Record<string, AttributeValue> | undefined): bigint | undefined {
  const text = item?.[FencingAttribute.fencingToken]?.N;
  if (text === undefined) return undefined;
  if (!/^\d+$/.test(text)) throw new Error(`fencing item has a fencingToken that is not a whole number: ${text}`);
  return BigInt(text);
}

/** The acquisition write as a transaction item, still asking for the lock item when its condition fails. */
export function asTransactItem(request: LockWriteRequest): TransactWriteItem {
  switch (request.operation) {
    case 'PutItem': {
      const { TableName, Item, ConditionExpression, ExpressionAttributeNames, ExpressionAttributeValues } = request.input;
      return {
        Put: {
          TableName,
          Item,
          ConditionExpression,
          ExpressionAttributeNames,
          ExpressionAttributeValues,
          ReturnValuesOnConditionCheckFailure: 'ALL_OLD',
        },
      };
    }
    case 'UpdateItem': {
      const { TableName, Key, UpdateExpression, ConditionExpression, ExpressionAttributeNames, ExpressionAttributeValues } = request.input;
      return {
        Update: {
          TableName,
          Key,
          UpdateExpression: UpdateExpression as string,
          ConditionExpression,
          ExpressionAttributeNames,
          ExpressionAttributeValues,
          ReturnValuesOnConditionCheckFailure: 'ALL_OLD',
        },
      };
    }
    case 'DeleteItem':
      throw new Error('an acquisition is never a DeleteItem');
  }
}

export interface FencedAcquisition {
  /** The token this acquisition gets if it commits. */
  readonly token: bigint;
  /** The lock write first (so that a cancellation's first reason is the lock's), then the counter. */
  readonly items: [TransactWriteItem, TransactWriteItem];
}

/**
 * The acquisition `request` and the counter's step from `seen` (the value
 * read; `undefined`: no fencing item) in one transaction.
 */
export function buildFencedAcquisition(
  fencingTable: LockTable,
  acquisition: { readonly request: LockWriteRequest; readonly key: LockKey; readonly ownerName: string; readonly recordVersionNumber: string },
  seen: bigint | undefined,
): FencedAcquisition {
  const token = (seen ?? 0n) + 1n;
  const names: Record<string, string> = {
    '#ft': FencingAttribute.fencingToken,
    '#on': FencingAttribute.ownerName,
    '#rvn': FencingAttribute.recordVersionNumber,
  };
  const values: Record<string, AttributeValue> = {
    ':ft': { N: token.toString() },
    ':on': { S: acquisition.ownerName },
    ':rvn': { S: acquisition.recordVersionNumber },
  };
  if (seen !== undefined) values[':seen'] = { N: seen.toString() };
  return {
    token,
    items: [
      asTransactItem(acquisition.request),
      {
        Update: {
          TableName: fencingTable.tableName,
          Key: lockItemKey(fencingTable, acquisition.key),
          UpdateExpression: 'SET #ft = :ft, #on = :on, #rvn = :rvn',
          ConditionExpression: seen === undefined ? 'attribute_not_exists(#ft)' : '#ft = :seen',
          ExpressionAttributeNames: names,
          ExpressionAttributeValues: values,
          ReturnValuesOnConditionCheckFailure: 'ALL_OLD',
        },
      },
    ],
  };
}
