/**
 * Our two extensions of the holder's writes (PROTOCOL.md §9.2 items 2-3, and
 * accepting the RVN of a write whose reply was lost). Off, the requests are
 * Java's byte for byte; on, they only ever match RVNs this holder wrote.
 */
import { describe, expect, it } from '@jest/globals';
import {
  Condition,
  buildHeartbeatRequest,
  buildReleaseRequest,
  holderCondition,
  type HeldLockState,
  type LockTable,
  type LockWriteRequest,
} from '../../src/protocol/index.js';

const hashTable: LockTable = { tableName: 't', partitionKeyName: 'key' };
const sortTable: LockTable = { tableName: 't', partitionKeyName: 'key', sortKeyName: 'sortKey' };
const held: HeldLockState = { partitionKey: 'job', ownerName: 'me', recordVersionNumber: 'rvn-1' };
const uncertain: HeldLockState = { ...held, uncertainRecordVersionNumbers: ['rvn-2'] };
const twiceUncertain: HeldLockState = { ...held, uncertainRecordVersionNumbers: ['rvn-2', 'rvn-3'] };

/** Every placeholder an expression uses, and nothing else, must be defined (DynamoDB rejects unused ones). */
function expectPlaceholdersExact(request: LockWriteRequest): void {
  const input = request.input as {
    ConditionExpression?: string;
    UpdateExpression?: string;
    ExpressionAttributeNames?: Record<string, string>;
    ExpressionAttributeValues?: Record<string, unknown>;
  };
  const text = `${input.ConditionExpression ?? ''} ${input.UpdateExpression ?? ''}`;
  const used = (sigil: string) => [...new Set(text.match(new RegExp(`${sigil}[A-Za-z0-9]+`, 'g')) ?? [])].sort();
  expect(Object.keys(input.ExpressionAttributeNames ?? {}).sort()).toEqual(used('#'));
  expect(Object.keys(input.ExpressionAttributeValues ?? {}).sort()).toEqual(used(':'));
}

describe('holderCondition', () => {
  it('is Java’s C10 / C9 when both extensions are off', () => {
    expect(holderCondition({ sortKey: false, refuseReleased: false, uncertainRvnCount: 0 })).toBe(Condition.heldByOwner);
    expect(holderCondition({ sortKey: true, refuseReleased: false, uncertainRvnCount: 0 })).toBe(Condition.heldByOwnerWithSortKey);
  });

  it.each([
    [false, true, 0, 'attribute_exists(#pk) AND #rvn = :rvn AND #on = :on AND attribute_not_exists(#ir)'],
    [true, true, 0, 'attribute_exists(#pk) AND attribute_exists(#sk) AND #rvn = :rvn AND #on = :on AND attribute_not_exists(#ir)'],
    [false, false, 1, 'attribute_exists(#pk) AND (#rvn = :rvn OR #rvn = :uncertainRvn0) AND #on = :on'],
    [false, false, 2, 'attribute_exists(#pk) AND (#rvn = :rvn OR #rvn = :uncertainRvn0 OR #rvn = :uncertainRvn1) AND #on = :on'],
    [
      true,
      true,
      1,
      'attribute_exists(#pk) AND attribute_exists(#sk) AND (#rvn = :rvn OR #rvn = :uncertainRvn0) AND #on = :on AND attribute_not_exists(#ir)',
    ],
  ])('sortKey %s, refuseReleased %s, uncertain RVNs %s', (sortKey, refuseReleased, uncertainRvnCount, expected) => {
    expect(holderCondition({ sortKey, refuseReleased, uncertainRvnCount })).toBe(expected);
  });
});

describe('heartbeat with our extensions', () => {
  it('refuses a released item and accepts the uncertain RVN', () => {
    const request = buildHeartbeatRequest(
      sortTable,
      { ...uncertain, sortKey: 'a' },
      {
        newRecordVersionNumber: 'rvn-3',
        leaseDurationMs: 20_000,
        refuseReleased: true,
      },
    );
    expect(request.operation).toBe('UpdateItem');
    expect(request.input.ConditionExpression).toBe(
      'attribute_exists(#pk) AND attribute_exists(#sk) AND (#rvn = :rvn OR #rvn = :uncertainRvn0) AND #on = :on AND attribute_not_exists(#ir)',
    );
    expect((request.input as { ExpressionAttributeValues: Record<string, unknown> }).ExpressionAttributeValues).toMatchObject({
      ':rvn': { S: 'rvn-1' },
      ':uncertainRvn0': { S: 'rvn-2' },
      ':newRvn': { S: 'rvn-3' },
    });
    expectPlaceholdersExact(request);
  });

  it('defines exactly the placeholders it uses in every combination', () => {
    for (const state of [held, uncertain, twiceUncertain]) {
      for (const refuseReleased of [false, true]) {
        for (const data of [undefined, new Uint8Array([1])]) {
          expectPlaceholdersExact(
            buildHeartbeatRequest(hashTable, state, { newRecordVersionNumber: 'n', leaseDurationMs: 1, refuseReleased, data }),
          );
        }
        expectPlaceholdersExact(
          buildHeartbeatRequest(hashTable, state, { newRecordVersionNumber: 'n', leaseDurationMs: 1, refuseReleased, deleteData: true }),
        );
      }
    }
  });
});

describe('release with our extensions', () => {
  it('marks released with a new RVN, data or not', () => {
    const plain = buildReleaseRequest(hashTable, held, { deleteLock: false, newRecordVersionNumber: 'rvn-9', refuseReleased: true });
    expect(plain.input).toMatchObject({
      UpdateExpression: 'SET #ir = :ir, #rvn = :newRvn',
      ConditionExpression: 'attribute_exists(#pk) AND #rvn = :rvn AND #on = :on AND attribute_not_exists(#ir)',
    });
    const withData = buildReleaseRequest(hashTable, uncertain, {
      deleteLock: false,
      data: new Uint8Array([7]),
      newRecordVersionNumber: 'rvn-9',
    });
    expect(withData.input).toMatchObject({
      UpdateExpression: 'SET #ir = :ir, #d = :d, #rvn = :newRvn',
      ConditionExpression: 'attribute_exists(#pk) AND (#rvn = :rvn OR #rvn = :uncertainRvn0) AND #on = :on',
    });
    expectPlaceholdersExact(plain);
    expectPlaceholdersExact(withData);
  });

  it('deletes under the same proof; a new RVN only matters when the item is kept', () => {
    const request = buildReleaseRequest(hashTable, uncertain, { deleteLock: true, newRecordVersionNumber: 'ignored', refuseReleased: true });
    expect(request.operation).toBe('DeleteItem');
    expect(request.input.ConditionExpression).toBe(
      'attribute_exists(#pk) AND (#rvn = :rvn OR #rvn = :uncertainRvn0) AND #on = :on AND attribute_not_exists(#ir)',
    );
    expectPlaceholdersExact(request);
  });
});
