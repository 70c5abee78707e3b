/**
 * Several locks read with BatchGetItem: over 100 keys in several calls, the
 * keys DynamoDB leaves unprocessed read again until every one was read
 * (DynamoDB Local cannot be made to leave keys unprocessed), each answer in
 * the order of the keys asked, each observed when its own reply arrived.
 */
import type { BatchGetItemCommand, BatchGetItemCommandOutput, DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { describe, expect, it } from '@jest/globals';
import type { MonotonicClock } from '../../src/base/clock.js';
import { readLocks } from '../../src/dynamodb/read-locks.js';
import type { LockItem, LockTable } from '../../src/protocol/index.js';

const TABLE: LockTable = { tableName: 'locks', partitionKeyName: 'key' };
const keyOf = (i: number) => ({ partitionKey: `k${i}`, sortKey: undefined });
const item = (key: string): LockItem => ({
  key: { S: key },
  ownerName: { S: 'holder' },
  leaseDuration: { S: '1000' },
  recordVersionNumber: { S: `rvn-${key}` },
});

/** A clock that moves on by 1 ms at each read of it. */
function ticking(): MonotonicClock {
  let now = 0;
  return { now: () => ++now, wallNow: () => 0 };
}

/** A DynamoDB that holds items for the even keys only, and leaves the first `unprocessed` keys of each call's first reply unprocessed once. */
function table(unprocessed: number): { dynamoDB: Pick<DynamoDBClient, 'send'>; calls: string[][] } {
  const calls: string[][] = [];
  let left = unprocessed;
  const send = async (command: BatchGetItemCommand): Promise<BatchGetItemCommandOutput> => {
    const request = command.input.RequestItems?.[TABLE.tableName];
    expect(request?.ConsistentRead).toBe(true);
    const keys = (request?.Keys ?? []).map((key) => key.key?.S ?? '');
    calls.push(keys);
    const skipped = keys.slice(0, left);
    left = 0;
    const served = keys.slice(skipped.length).filter((key) => Number(key.slice(1)) % 2 === 0);
    return {
      Responses: { [TABLE.tableName]: served.map(item) },
      ...(skipped.length === 0 ? {} : { UnprocessedKeys: { [TABLE.tableName]: { Keys: skipped.map((key) => ({ key: { S: key } })) } } }),
      $metadata: {},
    };
  };
  return { dynamoDB: { send: send as never }, calls };
}

describe('readLocks', () => {
  it('reads over 100 keys in calls of up to 100, and answers in the order asked', async () => {
    const { dynamoDB, calls } = table(0);
    const keys = Array.from({ length: 250 }, (_, i) => keyOf(i));
    const seen = await readLocks(dynamoDB, TABLE, keys, ticking());
    expect(calls.map((call) => call.length).sort()).toEqual([100, 100, 50]);
    expect(seen.map((observation) => observation?.record.partitionKey)).toEqual(
      keys.map((key, i) => (i % 2 === 0 ? key.partitionKey : undefined)),
    );
  });

  it('reads the keys left unprocessed again, and observes each item when its own reply arrived', async () => {
    const { dynamoDB, calls } = table(3);
    const seen = await readLocks(dynamoDB, TABLE, [0, 1, 2, 3, 4].map(keyOf), ticking());
    expect(calls).toEqual([
      ['k0', 'k1', 'k2', 'k3', 'k4'],
      ['k0', 'k1', 'k2'],
    ]);
    expect(seen.map((observation) => observation?.observedAt)).toEqual([2, undefined, 2, undefined, 1]);
  });

  it('ends with the signal while keys are still unprocessed', async () => {
    const { dynamoDB } = table(1);
    const stop = new AbortController();
    const reading = readLocks(dynamoDB, TABLE, [keyOf(0)], ticking(), stop.signal);
    stop.abort(new Error('stopped'));
    await expect(reading).rejects.toThrow('stopped');
  });
});
