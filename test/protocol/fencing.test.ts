/**
 * The fenced acquisition: Java's acquisition write, unchanged but for asking
 * for the old item, first; then the fencing counter's step, conditioned on
 * the value read.
 */
import { describe, expect, it } from '@jest/globals';
import {
  buildAcquireRequest,
  buildFencedAcquisition,
  fencingTokenOf,
  type LockRecordToWrite,
  type LockTable,
} from '../../src/protocol/index.js';

const locks: LockTable = { tableName: 'locks', partitionKeyName: 'key', sortKeyName: 'sk' };
const fencing: LockTable = { ...locks, tableName: 'locks-fencing' };
const record: LockRecordToWrite = {
  partitionKey: 'job',
  sortKey: 'a',
  ownerName: 'me',
  leaseDurationMs: 20_000,
  recordVersionNumber: 'rvn-1',
  data: undefined,
  additionalAttributes: {},
};
const acquisition = (request: ReturnType<typeof buildAcquireRequest>) => ({
  request,
  key: record,
  ownerName: 'me',
  recordVersionNumber: 'rvn-1',
});

describe('buildFencedAcquisition', () => {
  it('puts the acquisition PutItem first, as Java sends it, asking for the lock item on failure', () => {
    const request = buildAcquireRequest(locks, record, { kind: 'absent' });
    const [lock] = buildFencedAcquisition(fencing, acquisition(request), undefined).items;
    expect(lock).toEqual({ Put: { ...request.input, ReturnValuesOnConditionCheckFailure: 'ALL_OLD' } });
  });

  it('keeps an UpdateItem acquisition an Update, with its REMOVE of isReleased', () => {
    const request = buildAcquireRequest(
      locks,
      record,
      { kind: 'expired', watchedRecordVersionNumber: 'old' },
      { updateExistingLockRecord: true },
    );
    const [lock] = buildFencedAcquisition(fencing, acquisition(request), 7n).items;
    expect(lock).toEqual({ Update: { ...request.input, ReturnValuesOnConditionCheckFailure: 'ALL_OLD' } });
    expect(lock.Update?.UpdateExpression).toMatch(/ REMOVE #ir $/);
  });

  it('creates the counter at 1 where there is none, and steps it from the value read only if it is still that value', () => {
    const request = buildAcquireRequest(locks, record, { kind: 'absent' });
    const first = buildFencedAcquisition(fencing, acquisition(request), undefined);
    expect(first.token).toBe(1n);
    expect(first.items[1].Update).toMatchObject({
      TableName: 'locks-fencing',
      Key: { key: { S: 'job' }, sk: { S: 'a' } },
      UpdateExpression: 'SET #ft = :ft, #on = :on, #rvn = :rvn',
      ConditionExpression: 'attribute_not_exists(#ft)',
      ExpressionAttributeValues: { ':ft': { N: '1' }, ':on': { S: 'me' }, ':rvn': { S: 'rvn-1' } },
    });
    const later = buildFencedAcquisition(fencing, acquisition(request), 99999999999999999999999999999999999998n);
    expect(later.token).toBe(99999999999999999999999999999999999999n);
    expect(later.items[1].Update?.ConditionExpression).toBe('#ft = :seen');
    expect(later.items[1].Update?.ExpressionAttributeValues).toMatchObject({
      ':seen': { N: '99999999999999999999999999999999999998' },
      ':ft': { N: '99999999999999999999999999999999999999' },
    });
  });
});

describe('fencingTokenOf', () => {
  it('reads the counter as a bigint, none without an item, and refuses what is not a whole number', () => {
    expect(fencingTokenOf(undefined)).toBeUndefined();
    expect(fencingTokenOf({ key: { S: 'job' } })).toBeUndefined();
    expect(fencingTokenOf({ fencingToken: { N: '12345678901234567890123' } })).toBe(12345678901234567890123n);
    expect(() => fencingTokenOf({ fencingToken: { N: '1.5' } })).toThrow();
  });
});
