/**
 * GroupAcquireLoop on fake time, against a DynamoDB that answers from a
 * script: how a group's call ends. Its requests themselves are tested
 * against DynamoDB Local in integration/acquire/groups.test.ts.
 */
import { GetItemCommand } from '@aws-sdk/client-dynamodb';
import { describe, expect, it } from '@jest/globals';
import { resolveAcquireOptions } from '../../src/acquire/acquire-options.js';
import { GroupAcquireLoop } from '../../src/acquire/group-acquire.js';
import { DynamoDBUnavailableError, LockNotGrantedError } from '../../src/base/errors.js';
import { systemClock } from '../../src/base/clock.js';
import type { LockTable } from '../../src/protocol/index.js';
import type { DynamoDBSender } from '../../src/settings/options.js';
import { unitAcquisitionParts } from '../../test-kit/acquisition-parts.js';
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
      ...unitAcquisitionParts({ table, clock: systemClock, dynamoDB: liveHolder(), leaseDurationMs: LEASE, heartbeatPeriodMs: 100_000 }),
      releaseStray: async () => {},
    };
    // Seen at 1 ms with no wait: the deadline falls at 1 002 ms, a round at 1 002 ms sleeps a refresh period,
    // and the cut-off (a grace of one refresh period past Java's budget, 2 000 ms) falls during that sleep.
    using loop = new GroupAcquireLoop(
      ctx,
      [{ partitionKey: 'held' }, { partitionKey: 'free' }],
      resolveAcquireOptions(ctx, { additionalTimeToWaitForLock: 0, refreshPeriod: LEASE }),
    );
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
  const throttled = (): Error =>
    Object.assign(new Error('slow down'), { name: 'ThrottlingException', $metadata: { httpStatusCode: 400, attempts: 1 } });

  /**
   * Every key held by a dead holder (lease LEASE unless `leases` says), read in 1 ms; `answer` decides each
   * request's outcome by its kind and when it was sent (ms since the test's start): `undefined` to answer.
   */
  function deadHolders(
    sent: { command: string; at: number }[],
    answer: (command: string, at: number) => Error | undefined,
    leases: Record<string, number> = {},
  ): DynamoDBSender {
    const start = performance.now();
    return {
      send: (command) => {
        const at = performance.now() - start;
        const name = command.constructor.name;
        sent.push({ command: name, at });
        const key = command instanceof GetItemCommand ? (command.input.Key?.['key']?.S ?? '') : '';
        const item = {
          key: { S: key },
          ownerName: { S: 'dead' },
          leaseDuration: { S: String(leases[key] ?? LEASE) },
          recordVersionNumber: { S: `dead-${key}` },
        };
        const failure = answer(name, at);
        return new Promise((resolve, reject) =>
          setTimeout(() => (failure === undefined ? resolve(command instanceof GetItemCommand ? { Item: item } : {}) : reject(failure)), 1),
        );
      },
    };
  }

  /** Runs a group waiting `waitMs` on `dynamoDB` to the end of fake time: the keys it took, or its error. */
  async function runGroup(dynamoDB: DynamoDBSender, keys: string[], waitMs = 0): Promise<unknown> {
    const ctx = {
      ...unitAcquisitionParts({ table, clock: systemClock, dynamoDB, leaseDurationMs: LEASE, heartbeatPeriodMs: 100_000 }),
      releaseStray: async () => {},
    };
    using loop = new GroupAcquireLoop(
      ctx,
      keys.map((partitionKey) => ({ partitionKey })),
      resolveAcquireOptions(ctx, { additionalTimeToWaitForLock: waitMs, refreshPeriod: 100 }),
    );
    const ending = loop.run().then(
      (won) => won.map(({ record }) => record.partitionKey),
      (error: unknown) => error,
    );
    await advanceTo(5_000);
    return await ending;
  }

  const writesOf = (sent: { command: string; at: number }[]): string[] =>
    sent.filter(({ command }) => command !== 'GetItemCommand').map(({ command, at }) => `${command}@${at}`);

  it('waits out the longest lease of the holders its first round found, so that no wait still takes over a group of dead holders', async () => {
    // Two dead holders: `short` with a lease of 1 000 ms, `long` with 3 000 ms, both seen at 1 ms.
    const sent: { command: string; at: number }[] = [];
    const dynamoDB = deadHolders(sent, () => undefined, { short: LEASE, long: 3 * LEASE });
    expect(await runGroup(dynamoDB, ['short', 'long'])).toEqual(['short', 'long']);
    // The takeover transaction, once the longer lease is over (stale from 3 002 ms), after that round's reads (1 ms).
    expect(writesOf(sent)).toEqual([`TransactWriteItemsCommand@${3 * LEASE + 3}`]);
  });

  it('reads once more when the round at the takeover instant fails, and takes a group of dead holders', async () => {
    // Both keys' dead holders are seen at 1 ms, stale from 1 002 ms, where the wait (none) ends too: the round
    // read then (reads sent from 1 000 to 1 003 ms are throttled) fails past the deadline.
    const sent: { command: string; at: number }[] = [];
    const dynamoDB = deadHolders(sent, (command, at) =>
      command === 'GetItemCommand' && at >= LEASE && at < LEASE + 3 ? throttled() : undefined,
    );
    expect(await runGroup(dynamoDB, ['a', 'b'])).toEqual(['a', 'b']);
    // The round sent at 1 002 ms fails at 1 003 ms; the late round's reads answer at 1 004 ms.
    expect(writesOf(sent)).toEqual([`TransactWriteItemsCommand@${LEASE + 4}`]);
  });

  it('does not repeat a round that got as far as its transaction', async () => {
    // Both keys' dead holders are stale at 1 002 ms, where the wait (none) ends: the round then reads them
    // stale and sends its transaction, which is throttled. The call ends; it sends no second transaction.
    const sent: { command: string; at: number }[] = [];
    const dynamoDB = deadHolders(sent, (command) => (command === 'GetItemCommand' ? undefined : throttled()));
    expect(await runGroup(dynamoDB, ['a', 'b'])).toBeInstanceOf(DynamoDBUnavailableError);
    expect(writesOf(sent)).toEqual([`TransactWriteItemsCommand@${LEASE + 3}`]);
  });
  it('does not read again for a second takeover after one whose outcome is unknown', async () => {
    // Waiting 500 ms, the group's deadline falls at about 1 502 ms. Its takeover transaction at 1 003 ms fails
    // with a 500 (it may have been applied), and every read after it until the deadline is throttled.
    const sent: { command: string; at: number }[] = [];
    const serverError = Object.assign(new Error('internal'), { name: 'InternalServerError', $metadata: { httpStatusCode: 500, attempts: 1 } });
    const dynamoDB = deadHolders(sent, (command, at) => {
      if (command !== 'GetItemCommand') return serverError;
      return at > LEASE + 3 && at < LEASE + 511 ? throttled() : undefined;
    });
    expect(await runGroup(dynamoDB, ['a', 'b'], 500)).toBeInstanceOf(DynamoDBUnavailableError);
    expect(writesOf(sent)).toEqual([`TransactWriteItemsCommand@${LEASE + 3}`]);
  });
});
