/**
 * Tables with a sort key (PROTOCOL.md §1.1, §3.2 C2/C4/C6/C8/C9, §4.11):
 * every (partition key, sort key) pair is its own lock.
 */
import { describe, expect, it } from '@jest/globals';
import { InvalidArgumentError, LockCurrentlyUnavailableError, LockSnapshot } from '../../src/index.js';
import { LockTestBed, rejectionOf } from '../../test-kit/test-locks.js';
import { useLockTestBed } from '../../test-kit/jest/lock-test-bed-hook.js';
import { LIVE_LEASE_MS, STILL } from '../../test-kit/live-lease.js';

const LEASE = 1_000;
const HEARTBEAT = 250;

const bed = useLockTestBed('lock-sort-key', { partitionKeyName: 'resource', sortKeyName: 'part' });

async function collect(iterable: AsyncIterable<LockSnapshot>): Promise<LockSnapshot[]> {
  const all: LockSnapshot[] = [];
  for await (const snapshot of iterable) all.push(snapshot);
  return all.sort((a, b) => (a.sortKey ?? '').localeCompare(b.sortKey ?? ''));
}

describe('sort-key tables', () => {
  it('two sort keys under one partition key are independent locks', async () => {
    const alpha = bed.client({ ownerName: 'alpha', ...STILL });
    const beta = bed.client({ ownerName: 'beta', ...STILL });

    const lockA = await alpha.acquireLock('orders', { sortKey: 'a' });
    // Held (p, a) does not stand in the way of (p, b): skip-wait would fail at once otherwise.
    const lockB = await beta.acquireLock('orders', { sortKey: 'b', shouldSkipBlockingWait: true });
    expect(lockA.sortKey).toBe('a');
    expect(lockB.sortKey).toBe('b');

    const storedA = await bed.item('orders', 'a');
    expect(storedA?.['resource']).toEqual({ S: 'orders' });
    expect(storedA?.['part']).toEqual({ S: 'a' });
    expect(storedA?.['ownerName']).toEqual({ S: 'alpha' });
    expect(await bed.owner('orders', 'b')).toBe('beta');

    // But each one is exclusive.
    const refused = await rejectionOf(beta.acquireLock('orders', { sortKey: 'a', shouldSkipBlockingWait: true }));
    expect(refused).toBeInstanceOf(LockCurrentlyUnavailableError);
    expect((refused as LockCurrentlyUnavailableError).sortKey).toBe('a');
    expect((refused as LockCurrentlyUnavailableError).holder?.ownerName).toBe('alpha');

    expect(alpha.hasLock('orders', { sortKey: 'a' })).toBe(true);
    expect(alpha.hasLock('orders', { sortKey: 'b' })).toBe(false);
    expect(beta.hasLock('orders', { sortKey: 'b' })).toBe(true);
    expect(await alpha.getLock('orders', { sortKey: 'a' })).toBe(lockA);
    const snapshotB = await alpha.getLock('orders', { sortKey: 'b' });
    expect(snapshotB).toBeInstanceOf(LockSnapshot);
    expect(snapshotB).toMatchObject({ partitionKey: 'orders', sortKey: 'b', ownerName: 'beta' });
  }, 20_000);

  it('getLocksByPartitionKey lists every sort key of that partition key, released ones included', async () => {
    const alpha = bed.client({ ownerName: 'alpha', ...STILL });
    const beta = bed.client({ ownerName: 'beta', ...STILL });
    await alpha.acquireLock('orders', { sortKey: 'a', data: 'A' });
    await beta.acquireLock('orders', { sortKey: 'b' });
    await (await beta.acquireLock('orders', { sortKey: 'c', deleteLockOnRelease: false })).release();
    await alpha.acquireLock('invoices', { sortKey: 'a' });

    const listed = await collect(alpha.getLocksByPartitionKey('orders'));
    expect(listed.map((s) => [s.partitionKey, s.sortKey, s.ownerName, s.isReleased])).toEqual([
      ['orders', 'a', 'alpha', false],
      ['orders', 'b', 'beta', false],
      ['orders', 'c', 'beta', true],
    ]);
    expect(new TextDecoder().decode(listed[0]!.data)).toBe('A');
    // The sort key is the lock's identity, not an additional attribute.
    expect(listed[0]!.additionalAttributes).toEqual({});
    for (const snapshot of listed) expect(snapshot.recordVersionNumber).toBe(await bed.rvn('orders', snapshot.sortKey));

    expect((await collect(beta.getLocksByPartitionKey('invoices'))).map((s) => s.sortKey)).toEqual(['a']);
    expect(await collect(beta.getLocksByPartitionKey('nothing-here'))).toEqual([]);
    const everything = await collect(beta.getAllLocks());
    expect(everything).toHaveLength(4);
  }, 20_000);

  it('heartbeat and release touch only their own sort key', async () => {
    const client = bed.client({ ownerName: 'solo', ...STILL });
    const lockA = await client.acquireLock('jobs', { sortKey: 'a' });
    const lockB = await client.acquireLock('jobs', { sortKey: 'b' });
    const rvnA = await bed.rvn('jobs', 'a');
    const rvnB = await bed.rvn('jobs', 'b');
    expect(rvnA).toBe(lockA.recordVersionNumber);

    await client.sendHeartbeat(lockA);
    expect(lockA.recordVersionNumber).not.toBe(rvnA);
    expect(await bed.rvn('jobs', 'a')).toBe(lockA.recordVersionNumber);
    expect(await bed.rvn('jobs', 'b')).toBe(rvnB);

    await lockB.sendHeartbeat();
    expect(await bed.rvn('jobs', 'b')).toBe(lockB.recordVersionNumber);
    expect(await bed.rvn('jobs', 'b')).not.toBe(rvnB);

    expect(await client.releaseLock(lockA)).toBe(true);
    expect(await bed.item('jobs', 'a')).toBeUndefined();
    expect(await bed.owner('jobs', 'b')).toBe('solo');
    expect(client.hasLock('jobs', { sortKey: 'b' })).toBe(true);

    expect(await lockB.release({ deleteLock: false })).toBe(true);
    expect((await bed.item('jobs', 'b'))?.['isReleased']).toEqual({ S: '1' });
    expect((await bed.item('jobs', 'b'))?.['part']).toEqual({ S: 'b' });
  }, 20_000);

  it('background heartbeats keep both sort keys alive independently', async () => {
    const holder = bed.client({ ownerName: 'holder', leaseDuration: LIVE_LEASE_MS, heartbeatPeriod: HEARTBEAT });
    const waiter = bed.client({ ownerName: 'waiter', leaseDuration: LEASE, heartbeatPeriod: HEARTBEAT });
    const lockA = await holder.acquireLock('beats', { sortKey: 'a' });
    const lockB = await holder.acquireLock('beats', { sortKey: 'b' });
    const firstA = lockA.recordVersionNumber;
    const firstB = lockB.recordVersionNumber;

    const refused = await waiter.tryAcquireLock('beats', { sortKey: 'a', refreshPeriod: 100, additionalTimeToWaitForLock: 200 });
    expect(refused).toBeUndefined();
    expect(await bed.rvn('beats', 'a')).not.toBe(firstA);
    expect(await bed.rvn('beats', 'b')).not.toBe(firstB);
    expect(await bed.owner('beats', 'a')).toBe('holder');
    expect(await bed.owner('beats', 'b')).toBe('holder');
  }, 20_000);

  it('refuses a missing sort key, and a sort key on a table without one, before calling DynamoDB', async () => {
    const client = bed.client({ ownerName: 'careless', leaseDuration: LEASE, heartbeatPeriod: HEARTBEAT });
    const missing = await rejectionOf(client.acquireLock('orders'));
    expect(missing).toBeInstanceOf(InvalidArgumentError);
    expect((missing as InvalidArgumentError).code).toBe('SORT_KEY_REQUIRED');
    await expect(client.getLock('orders')).rejects.toBeInstanceOf(InvalidArgumentError);

    const plain = new LockTestBed('lock-sort-key-plain');
    try {
      const plainClient = plain.client({ ownerName: 'plain', leaseDuration: LEASE, heartbeatPeriod: HEARTBEAT });
      const extra = await rejectionOf(plainClient.acquireLock('orders', { sortKey: 'a' }));
      expect(extra).toBeInstanceOf(InvalidArgumentError);
      expect((extra as InvalidArgumentError).code).toBe('SORT_KEY_NOT_ALLOWED');
    } finally {
      await plain.dispose();
    }
  }, 20_000);
});
