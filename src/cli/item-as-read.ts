/**
 * A lock item that does not decode (a missing attribute, a lease that is not
 * a number, …), which no client can acquire: shown to the operator attribute
 * by attribute, and deleted only while it is still as shown.
 */
import type { AttributeValue, DeleteItemCommandInput } from '@aws-sdk/client-dynamodb';
import type { LockKey } from '../base/lock-key.js';
import { LockAttribute, lockItemKey, type LockItem, type LockTable } from '../protocol/index.js';

/** Each attribute's value as DynamoDB JSON (`{"S":"…"}`), binary values in base64. */
export function itemFields(item: LockItem): [name: string, value: string][] {
  return Object.keys(item)
    .sort()
    .map((name) => [name, JSON.stringify(item[name], binaryAsBase64)]);
}

function binaryAsBase64(_key: string, value: unknown): unknown {
  return value instanceof Uint8Array ? Buffer.from(value).toString('base64') : value;
}

/**
 * A DeleteItem that fails unless every attribute of the item still has the
 * value read. Every write of a lock client sets a new record version number,
 * so an item read without one must still have none.
 */
export function deleteItemAsRead(table: LockTable, key: LockKey, item: LockItem): DeleteItemCommandInput {
  const keyNames = new Set([table.partitionKeyName, table.sortKeyName]);
  const names: Record<string, string> = {};
  const values: Record<string, AttributeValue> = {};
  const clauses = Object.keys(item)
    .filter((name) => !keyNames.has(name))
    .map((name, i) => {
      names[`#a${i}`] = name;
      values[`:v${i}`] = item[name] as AttributeValue;
      return `#a${i} = :v${i}`;
    });
  if (!(LockAttribute.recordVersionNumber in item)) {
    names['#rvn'] = LockAttribute.recordVersionNumber;
    clauses.push('attribute_not_exists(#rvn)');
  }
  return {
    TableName: table.tableName,
    Key: lockItemKey(table, key),
    ConditionExpression: clauses.join(' AND '),
    ExpressionAttributeNames: names,
    ...(Object.keys(values).length === 0 ? {} : { ExpressionAttributeValues: values }),
    ReturnValuesOnConditionCheckFailure: 'ALL_OLD',
  };
}
