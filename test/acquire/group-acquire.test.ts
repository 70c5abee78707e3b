/**
 * GroupAcquireLoop on fake time, against a DynamoDB that answers from a
 * script: how a group's call ends. Its requests themselves are tested
 * against DynamoDB Local in integration/acquire/groups.test.ts.
 */
import { GetItemCommand } from '@aws-sdk/client-dynamodb';
import { describe, expect, it } from '@jest/globals';
import { GroupAcquireLoop } from '../../src/acquire/group-acquire.js';
import { DynamoDBUnavailableError, LockNotGrantedError } from '../../src/base/errors.js';
import { systemClock } from '../../src/base/clock.js';
import type { LockTable } from '../../src/protocol/index.js';
import type { DynamoDBSender } from '../../src/settings/options.js';
import { unitAcquireContext } from '../../test-kit/acquire-context.js';
import { useFakeTime } from '../../test-kit/jest/fake-time.js';

const { advanceTo } = useFakeTime();
const table: LockTable = { tableName: 'locks', partitionKeyName: 'key' };
const LEASE = 1_000;

/** Key `held` belongs to a live holder that heartbeats between any two reads; every other key is free. Reads answer in 1 ms. */
const liveHolder = (): DynamoDBSender => {
  let heartbeats = 0;
  return {
    send: (command) => {
      if (!(command instanceof GetItemCommand)) return Promise.reject(new Error('this test writes nothing'));
      const key = command.input.Key?.['key']?.S;
      const item = {
        key: { S: 'held' },
        ownerName: { S: 'holder' },
        leaseDuration: { S: String(LEASE) },
        recordVersionNumber: { S: `rvn-${++heartbeats}` },
      };
      return new Promise((resolve) => setTimeout(() => resolve(key === 'held' ? { Item: item } : {}), 1));
    },
  };
};

describe('GroupAcquireLoop', () => {
  it('ends with LockNotGrantedError naming the holder when its requests are cut off between two rounds that were answered', async () => {
    const ctx = {
      ...unitAcquireContext({ table, clock: systemClock, dynamoDB: liveHolder(), leaseDurationMs: LEASE, heartbeatPeriodMs: 100_000 }),
      releaseStray: async () => {},
    };
    // Seen at 1 ms with no wait: the deadline falls at 1 002 ms, a round at 1 002 ms sleeps a refresh period,
    // and the cut-off (a grace of one refresh period past Java's budget, 2 000 ms) falls during that sleep.
    using loop = new GroupAcquireLoop(ctx, [{ partitionKey: 'held' }, { partitionKey: 'free' }], {
      additionalTimeToWaitForLock: 0,
      refreshPeriod: LEASE,
    });
    const ending = loop.run().then(
      () => undefined,
      (error: unknown) => error,
    );
    await advanceTo(3_000);
    const error = await ending;
    expect(error).toBeInstanceOf(LockNotGrantedError);
    expect(error).not.toBeInstanceOf(DynamoDBUnavailableError);
    expect(error).toMatchObject({ partitionKey: 'held', holder: { ownerName: 'holder' } });
  });
  it('waits out the longest lease of the holders its first round found, so that no wait still takes over a group of dead holders', async () => {
    // Two dead holders: `short` with a lease of 1 000 ms, `long` with 3 000 ms, both seen at 1 ms.
    const leases: Record<string, number> = { short: LEASE, long: 3 * LEASE };
    const writesSentAt: number[] = [];
    const deadHolders: DynamoDBSender = {
      send: (command) => {
        if (!(command instanceof GetItemCommand)) {
          writesSentAt.push(performance.now() - start);
          return Promise.resolve({});
        }
        const key = command.input.Key?.['key']?.S ?? '';
        const item = {
          key: { S: key },
          ownerName: { S: 'dead' },
          leaseDuration: { S: String(leases[key]) },
          recordVersionNumber: { S: `dead-${key}` },
        };
        return new Promise((resolve) => setTimeout(() => resolve({ Item: item }), 1));
      },
    };
    const ctx = {
      ...unitAcquireContext({ table, clock: systemClock, dynamoDB: deadHolders, leaseDurationMs: LEASE, heartbeatPeriodMs: 100_000 }),
      releaseStray: async () => {},
    };
    const start = performance.now();
    using loop = new GroupAcquireLoop(ctx, [{ partitionKey: 'short' }, { partitionKey: 'long' }], {
      additionalTimeToWaitForLock: 0,
      refreshPeriod: 100,
    });
    const ending = loop.run().then(
      (won) => won.map(({ record }) => record.partitionKey),
      (error: unknown) => error,
    );
    await advanceTo(5_000);
    expect(await ending).toEqual(['short', 'long']);
    // The takeover transaction, once the longer lease is over (seen at 1 ms, stale from 3 002 ms), after that round's reads (1 ms).
    expect(writesSentAt).toEqual([3 * LEASE + 3]);
  });
  it('reads once more when the round at the takeover instant fails, and takes a group of dead holders', async () => {
    // Both keys' dead holders are seen at 1 ms, stale from 1 002 ms, where the wait (none) ends too: the round
    // read then (reads sent from 1 000 to 1 003 ms are throttled) fails past the deadline.
    const writesSentAt: number[] = [];
    const start = performance.now();
    const deadHolders: DynamoDBSender = {
      send: (command) => {
        const sentAt = performance.now() - start;
        if (!(command instanceof GetItemCommand)) {
          writesSentAt.push(sentAt);
          return Promise.resolve({});
        }
        const key = command.input.Key?.['key']?.S ?? '';
        const item = {
          key: { S: key },
          ownerName: { S: 'dead' },
          leaseDuration: { S: String(LEASE) },
          recordVersionNumber: { S: `dead-${key}` },
        };
        const throttled = Object.assign(new Error('slow down'), { name: 'ThrottlingException', $metadata: { httpStatusCode: 400 } });
        return new Promise((resolve, reject) =>
          setTimeout(() => (sentAt >= LEASE && sentAt < LEASE + 3 ? reject(throttled) : resolve({ Item: item })), 1),
        );
      },
    };
    const ctx = {
      ...unitAcquireContext({ table, clock: systemClock, dynamoDB: deadHolders, leaseDurationMs: LEASE, heartbeatPeriodMs: 100_000 }),
      releaseStray: async () => {},
    };
    using loop = new GroupAcquireLoop(ctx, [{ partitionKey: 'a' }, { partitionKey: 'b' }], {
      additionalTimeToWaitForLock: 0,
      refreshPeriod: 100,
    });
    const ending = loop.run().then(
      (won) => won.map(({ record }) => record.partitionKey),
      (error: unknown) => error,
    );
    await advanceTo(3_000);
    expect(await ending).toEqual(['a', 'b']);
    // The round sent at 1 002 ms fails at 1 003 ms; the late round's reads answer at 1 004 ms.
    expect(writesSentAt).toEqual([LEASE + 4]);
  });
});
