/**
 * The lock guard of a guarded write: the holder's own heartbeat condition,
 * read by a ConditionCheck instead of written, asking for the lock item when
 * it fails.
 */
import { describe, expect, it } from '@jest/globals';
import { buildLockGuard, holderCondition, type HeldLockState, type LockTable } from '../../src/protocol/index.js';

const hashTable: LockTable = { tableName: 'locks', partitionKeyName: 'key' };
const sortTable: LockTable = { tableName: 'locks', partitionKeyName: 'pk', sortKeyName: 'sk' };
const held: HeldLockState = { partitionKey: 'job', ownerName: 'me', recordVersionNumber: 'rvn-1' };

/** Placeholders the expression uses, and those the request defines, must be the same (DynamoDB refuses unused ones). */
function placeholders(check: { ConditionExpression?: string; ExpressionAttributeNames?: object; ExpressionAttributeValues?: object }) {
  const used = (sigil: string) => [...new Set(check.ConditionExpression?.match(new RegExp(`${sigil}[A-Za-z0-9]+`, 'g')) ?? [])].sort();
  return {
    names: [Object.keys(check.ExpressionAttributeNames ?? {}).sort(), used('#')],
    values: [Object.keys(check.ExpressionAttributeValues ?? {}).sort(), used(':')],
  };
}

describe('buildLockGuard', () => {
  it('checks the lock item for this owner, its last RVN and no isReleased, and asks for the item on failure', () => {
    const guard = buildLockGuard(hashTable, held);
    expect(Object.keys(guard)).toEqual(['ConditionCheck']);
    expect(guard.ConditionCheck).toEqual({
      TableName: 'locks',
      Key: { key: { S: 'job' } },
      ConditionExpression: 'attribute_exists(#pk) AND #rvn = :rvn AND #on = :on AND attribute_not_exists(#ir)',
      ExpressionAttributeNames: { '#pk': 'key', '#on': 'ownerName', '#rvn': 'recordVersionNumber', '#ir': 'isReleased' },
      ExpressionAttributeValues: { ':rvn': { S: 'rvn-1' }, ':on': { S: 'me' } },
      ReturnValuesOnConditionCheckFailure: 'ALL_OLD',
    });
  });

  it('also accepts the RVNs of writes whose outcome is unknown, as the next heartbeat would', () => {
    const guard = buildLockGuard(hashTable, { ...held, uncertainRecordVersionNumbers: ['rvn-2', 'rvn-3'] }).ConditionCheck!;
    expect(guard.ConditionExpression).toBe(holderCondition({ sortKey: false, refuseReleased: true, uncertainRvnCount: 2 }));
    expect(guard.ExpressionAttributeValues).toMatchObject({ ':uncertainRvn0': { S: 'rvn-2' }, ':uncertainRvn1': { S: 'rvn-3' } });
    const { names, values } = placeholders(guard);
    expect(names[0]).toEqual(names[1]);
    expect(values[0]).toEqual(values[1]);
  });

  it('names the sort key on sort-key tables', () => {
    const guard = buildLockGuard(sortTable, { ...held, sortKey: 'part-1' }).ConditionCheck!;
    expect(guard.Key).toEqual({ pk: { S: 'job' }, sk: { S: 'part-1' } });
    expect(guard.ConditionExpression).toBe(
      'attribute_exists(#pk) AND attribute_exists(#sk) AND #rvn = :rvn AND #on = :on AND attribute_not_exists(#ir)',
    );
    const { names, values } = placeholders(guard);
    expect(names[0]).toEqual(names[1]);
    expect(values[0]).toEqual(values[1]);
  });
});
