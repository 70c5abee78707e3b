/**
 * How many DynamoDB calls each acquisition path costs, counted by a
 * middleware on the SDK client (test-kit/call-counter.ts) against DynamoDB
 * Local: a free lock in one call, a released one in two, a release in one.
 * The Java client reads before every acquisition write (two calls for a free
 * lock, three for an acquire + release cycle). Each client's first
 * acquisition also checks the table's replication once (DescribeTable).
 */
import { describe, expect, it } from '@jest/globals';
import { LockCurrentlyUnavailableError, type LockClient } from '../../src/index.js';
import { countCalls, type CallCounter } from '../../test-kit/call-counter.js';
import { LockTestBed, rejectionOf } from '../../test-kit/test-locks.js';
import { useLockTestBed } from '../../test-kit/jest/lock-test-bed-hook.js';

// A write answered after a heartbeat period is renewed at once (src/acquire/late-reply.ts), one call more:
// the period is far above what the busiest CI run takes to answer, stalls included, so that the counts are the paths' own.
const LEASE = 12_000;
const HEARTBEAT = 3_000;
/** The silent holder's lease, which its waiter waits out. */
const SILENT_LEASE = 4_000;

const bed = useLockTestBed('acquire-calls');

/** A lock client whose DynamoDB calls are counted. */
function countedClient(
  ownerName: string,
  settings: { backgroundHeartbeats?: boolean; leaseDuration?: number } = {},
): { client: LockClient; counter: CallCounter } {
  const dynamoDB = bed.dynamoDBClient(ownerName);
  const counter = countCalls(dynamoDB);
  const client = bed.client({ ownerName, leaseDuration: LEASE, heartbeatPeriod: HEARTBEAT, backgroundHeartbeats: false, ...settings }, dynamoDB);
  return { client, counter };
}

describe('calls per path', () => {
  it('a free lock: one PutItem; its release: one DeleteItem, so one cycle is two calls', async () => {
    const { client, counter } = countedClient('free');

    const lock = await client.acquireLock('free-key');
    // The client's first acquisition checks the table once (DescribeTable); later ones do not.
    expect(counter.calls).toEqual(['DescribeTable', 'PutItem']);
    expect(await bed.owner('free-key')).toBe('free');

    counter.reset();
    expect(await lock.release()).toBe(true);
    expect(counter.calls).toEqual(['DeleteItem']);
    expect(await bed.item('free-key')).toBeUndefined();

    // Many cycles on one key cost the same each time.
    counter.reset();
    for (let i = 0; i < 5; i++) await (await client.acquireLock('free-key')).release();
    expect(counter.counts()).toEqual({ PutItem: 5, DeleteItem: 5 });
  });

  it('a lock released with deleteLock false: the release is one UpdateItem, and taking it is two PutItems', async () => {
    const releaser = countedClient('releaser');
    const taker = countedClient('taker');

    const lock = await releaser.client.acquireLock('kept', { deleteLockOnRelease: false });
    releaser.counter.reset();
    expect(await lock.release()).toBe(true);
    expect(releaser.counter.calls).toEqual(['UpdateItem']);
    expect((await bed.item('kept'))?.['isReleased']).toEqual({ S: '1' });

    const taken = await taker.client.acquireLock('kept', { additionalTimeToWaitForLock: 0 });
    // The new-lock write is refused and returns the released item; the released-lock write takes it.
    expect(taker.counter.calls).toEqual(['DescribeTable', 'PutItem', 'PutItem']);
    expect(taken.ownerName).toBe('taker');
    expect((await bed.item('kept'))?.['isReleased']).toBeUndefined();
  });

  it('updateExistingLockRecord: the same counts with UpdateItem', async () => {
    const { client, counter } = countedClient('updater');
    const options = { updateExistingLockRecord: true, deleteLockOnRelease: false };

    await (await client.acquireLock('upd', options)).release();
    expect(counter.calls).toEqual(['DescribeTable', 'UpdateItem', 'UpdateItem']);

    counter.reset();
    const lock = await client.acquireLock('upd', options);
    expect(counter.calls).toEqual(['UpdateItem', 'UpdateItem']);
    expect(lock.state).toBe('held');
  });

  it('acquireOnlyIfLockAlreadyExists reads first, as Java does: GetItem, then the released-lock write', async () => {
    const { client, counter } = countedClient('only-existing');
    await (await client.acquireLock('existing', { deleteLockOnRelease: false })).release();

    counter.reset();
    const lock = await client.acquireLock('existing', { acquireOnlyIfLockAlreadyExists: true });
    expect(counter.calls).toEqual(['GetItem', 'PutItem']);
    expect(lock.state).toBe('held');
  });

  it('shouldSkipBlockingWait on a held lock: one refused PutItem, nothing written', async () => {
    const holder = countedClient('holder');
    const skipper = countedClient('skipper');
    const lock = await holder.client.acquireLock('busy');

    const error = await rejectionOf(skipper.client.acquireLock('busy', { shouldSkipBlockingWait: true }));
    expect(error).toBeInstanceOf(LockCurrentlyUnavailableError);
    expect((error as LockCurrentlyUnavailableError).holder?.recordVersionNumber).toBe(lock.recordVersionNumber);
    expect(skipper.counter.calls).toEqual(['DescribeTable', 'PutItem']);
    expect(await bed.rvn('busy')).toBe(lock.recordVersionNumber);
  });

  it('a silent holder is taken over at its lease without a read: the refused new-lock write, then the takeover', async () => {
    const silent = countedClient('silent', { leaseDuration: SILENT_LEASE });
    const waiter = countedClient('waiter');
    const lock = await silent.client.acquireLock('silent-key');

    // Polls only every 20 s: the takeover one lease after the refused write cannot wait for a poll.
    const taken = await waiter.client.acquireLock('silent-key', { refreshPeriod: 20_000, additionalTimeToWaitForLock: 5_000 });
    expect(waiter.counter.calls).toEqual(['DescribeTable', 'PutItem', 'PutItem']);
    expect(taken.ownerName).toBe('waiter');
    expect(await bed.owner('silent-key')).toBe('waiter');
    expect(await bed.rvn('silent-key')).toBe(taken.recordVersionNumber);
    expect(taken.recordVersionNumber).not.toBe(lock.recordVersionNumber);
  });
});

describe('sort-key clients', () => {
  it('read first until one read proved the table has the sort key, then write first', async () => {
    const sortBed = new LockTestBed('acquire-calls-sk', { sortKeyName: 'sortKey' });
    try {
      await sortBed.createTable();
      const dynamoDB = sortBed.dynamoDBClient('sk');
      const counter = countCalls(dynamoDB);
      const client = sortBed.client({ ownerName: 'sk', leaseDuration: LEASE, heartbeatPeriod: HEARTBEAT }, dynamoDB);

      await (await client.acquireLock('p', { sortKey: 'a' })).release();
      expect(counter.calls).toEqual(['DescribeTable', 'GetItem', 'PutItem', 'DeleteItem']);

      counter.reset();
      await (await client.acquireLock('p', { sortKey: 'b' })).release();
      expect(counter.calls).toEqual(['PutItem', 'DeleteItem']);
    } finally {
      await sortBed.dispose();
    }
  });
});
