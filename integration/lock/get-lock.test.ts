/**
 * Reading locks without acquiring them: getLock and hasLock (PROTOCOL.md §4.9,
 * §5.8, §9.2 item 18).
 */
import { describe, expect, it } from '@jest/globals';
import { InvalidArgumentError, Lock, LockSnapshot } from '../../src/index.js';
import { recording, rejectionOf } from '../../test-kit/test-locks.js';
import { useLockTestBed } from '../../test-kit/jest/lock-test-bed-hook.js';

const LEASE = 1_000;
const HEARTBEAT = 250;

const bed = useLockTestBed('lock-get-lock');

describe('getLock', () => {
  it('returns the same Lock for a lock this client holds, without a DynamoDB call', async () => {
    const recorder = recording(bed.dynamoDBClient('mine'));
    const client = bed.client({ ownerName: 'mine', leaseDuration: LEASE, heartbeatPeriod: HEARTBEAT }, recorder.dynamoDB);
    const lock = await client.acquireLock('own');
    const reads = recorder.named('GetItemCommand').length;

    expect(await client.getLock('own')).toBe(lock);
    expect(recorder.named('GetItemCommand')).toHaveLength(reads);
    expect(client.hasLock('own')).toBe(true);
  }, 20_000);

  it('returns a read-only LockSnapshot of someone else’s lock, which cannot be released or heartbeated', async () => {
    // No heartbeat changes the RVN the snapshot is compared with, and the lease outlasts the test on a loaded machine.
    const ownerLease = 20_000;
    const owner = bed.client({ ownerName: 'owner', leaseDuration: ownerLease, backgroundHeartbeats: false });
    const viewer = bed.client({ ownerName: 'viewer', leaseDuration: LEASE, heartbeatPeriod: HEARTBEAT });
    const lock = await owner.acquireLock('theirs', { data: 'payload', additionalAttributes: { region: 'eu', count: 3 } });

    const seen = await viewer.getLock('theirs');
    expect(seen).toBeInstanceOf(LockSnapshot);
    expect(seen).not.toBeInstanceOf(Lock);
    const snapshot = seen as LockSnapshot;
    expect(snapshot).toMatchObject({
      partitionKey: 'theirs',
      sortKey: undefined,
      ownerName: 'owner',
      recordVersionNumber: lock.recordVersionNumber,
      leaseDuration: ownerLease,
      isReleased: false,
    });
    expect(new TextDecoder().decode(snapshot.data)).toBe('payload');
    expect(snapshot.additionalAttributes).toEqual({ region: 'eu', count: 3 });
    expect(viewer.hasLock('theirs')).toBe(false);

    const release = await rejectionOf(viewer.releaseLock(snapshot as unknown as Lock));
    expect(release).toBeInstanceOf(InvalidArgumentError);
    await expect(viewer.sendHeartbeat(snapshot as unknown as Lock)).rejects.toBeInstanceOf(InvalidArgumentError);
    // Not even the holder's own client accepts a snapshot.
    await expect(owner.releaseLock(snapshot as unknown as Lock)).rejects.toBeInstanceOf(InvalidArgumentError);
    // Nor does a client accept a Lock another client acquired.
    await expect(viewer.releaseLock(lock)).rejects.toBeInstanceOf(InvalidArgumentError);
    await expect(viewer.sendHeartbeat(lock)).rejects.toBeInstanceOf(InvalidArgumentError);

    const stored = await bed.item('theirs');
    expect(stored?.['ownerName']).toEqual({ S: 'owner' });
    expect(stored?.['recordVersionNumber']).toEqual({ S: lock.recordVersionNumber });
    expect(lock.state).toBe('held');
  }, 20_000);

  it('is undefined for a released lock and for a lock that never existed; hasLock follows', async () => {
    const owner = bed.client({ ownerName: 'owner', leaseDuration: LEASE, heartbeatPeriod: HEARTBEAT });
    const viewer = bed.client({ ownerName: 'viewer', leaseDuration: LEASE, heartbeatPeriod: HEARTBEAT });

    expect(await viewer.getLock('never')).toBeUndefined();
    expect(await owner.getLock('never')).toBeUndefined();
    expect(owner.hasLock('never')).toBe(false);

    const marked = await owner.acquireLock('marked', { deleteLockOnRelease: false });
    const deleted = await owner.acquireLock('deleted');
    expect(owner.hasLock('marked')).toBe(true);
    expect(owner.hasLock('deleted')).toBe(true);
    expect(viewer.hasLock('marked')).toBe(false);

    await marked.release();
    await deleted.release();
    expect((await bed.item('marked'))?.['isReleased']).toEqual({ S: '1' });
    expect(await bed.item('deleted')).toBeUndefined();

    for (const client of [owner, viewer]) {
      expect(await client.getLock('marked')).toBeUndefined();
      expect(await client.getLock('deleted')).toBeUndefined();
    }
    expect(owner.hasLock('marked')).toBe(false);
    expect(owner.hasLock('deleted')).toBe(false);
  }, 20_000);

  it('with includeReleased, reads the data a release left on an item it kept, as text too', async () => {
    const owner = bed.client({ ownerName: 'owner', leaseDuration: LEASE, heartbeatPeriod: HEARTBEAT });
    const viewer = bed.client({ ownerName: 'viewer', leaseDuration: LEASE, heartbeatPeriod: HEARTBEAT });
    const lock = await owner.acquireLock('handed-on', { data: 'started' });
    expect(lock.dataText).toBe('started');
    await lock.release({ deleteLock: false, data: 'done: 42 rows' });

    expect(await viewer.getLock('handed-on')).toBeUndefined(); // as Java's getLock
    for (const client of [owner, viewer]) {
      const left = await client.getLock('handed-on', { includeReleased: true });
      expect(left).toBeInstanceOf(LockSnapshot);
      expect(left).toMatchObject({ partitionKey: 'handed-on', ownerName: 'owner', isReleased: true, dataText: 'done: 42 rows' });
    }
    expect(await viewer.getLock('never-taken', { includeReleased: true })).toBeUndefined();
  }, 20_000);

  it('gives data back as text when it is UTF-8, and no text for binary data or none', async () => {
    const owner = bed.client({ ownerName: 'owner', leaseDuration: LEASE, heartbeatPeriod: HEARTBEAT });
    const viewer = bed.client({ ownerName: 'viewer', leaseDuration: LEASE, heartbeatPeriod: HEARTBEAT });
    const text = await owner.acquireLock('text', { data: 'ünïcode ✓' });
    const binary = await owner.acquireLock('binary', { data: new Uint8Array([0xff, 0xfe, 0x00]) });
    const none = await owner.acquireLock('none');
    expect([text.dataText, binary.dataText, none.dataText]).toEqual(['ünïcode ✓', undefined, undefined]);
    const seen = await Promise.all(['text', 'binary', 'none'].map((key) => viewer.getLock(key) as Promise<LockSnapshot>));
    expect(seen.map((snapshot) => snapshot.dataText)).toEqual(['ünïcode ✓', undefined, undefined]);
    expect(seen[1]?.data).toEqual(new Uint8Array([0xff, 0xfe, 0x00]));
  }, 20_000);

  it('a lock without heartbeats that outlives its lease is given up: hasLock false, getLock reads the table', async () => {
    const client = bed.client({ ownerName: 'lazy', leaseDuration: 500, heartbeatPeriod: 100, backgroundHeartbeats: false });
    const lock = await client.acquireLock('lapsing');
    expect(client.hasLock('lapsing')).toBe(true);
    await new Promise((resolve) => setTimeout(resolve, 700));
    expect(lock.isExpired()).toBe(true);
    expect(lock.state).toBe('lost');
    expect(client.hasLock('lapsing')).toBe(false);
    // Unlike Java, a lapsed lock is no longer "ours": getLock shows the table, where the item still names us.
    const seen = await client.getLock('lapsing');
    expect(seen).toBeInstanceOf(LockSnapshot);
    expect((seen as LockSnapshot).ownerName).toBe('lazy');
    // As in Java, the lapsed lock can still be released while nobody took it.
    expect(await lock.release()).toBe(true);
    expect(lock.state).toBe('released');
    expect(await client.getLock('lapsing')).toBeUndefined();
  }, 20_000);
});
