/**
 * Releasing (PROTOCOL.md §4.8, §7.3), lock data (§5.3),
 * acquireOnlyIfLockAlreadyExists (§5.2) and close() (§4.13).
 */
import { describe, expect, it } from '@jest/globals';
import {
  InvalidArgumentError,
  LockClient,
  LockClientCloseError,
  LockClientClosedError,
  LockLostError,
  LockNotGrantedError,
  LockSnapshot,
} from '../../src/index.js';
import { localClientConfig } from '../../test-kit/aws.js';
import { now, recording, rejectionOf, sleep, text, watch } from '../../test-kit/test-locks.js';
import { useLockTestBed } from '../../test-kit/jest/lock-test-bed-hook.js';
import { LIVE_LEASE_MS } from '../../test-kit/live-lease.js';

const LEASE = 1_000;
const HEARTBEAT = 250;
const REFRESH = 100;
/** A lease nobody could wait out within a test: re-acquisition must not be a takeover. */
const LONG_LEASE = 60_000;

const bed = useLockTestBed('lock-release');

const bytes = (...values: number[]): Uint8Array => Uint8Array.from(values);
const utf8 = (s: string): Uint8Array => new TextEncoder().encode(s);

describe('release', () => {
  it('by delete: the item is gone and another client acquires at once', async () => {
    const first = bed.client({ ownerName: 'first', leaseDuration: LONG_LEASE, heartbeatPeriod: 15_000 });
    const second = bed.client({ ownerName: 'second', leaseDuration: LEASE, heartbeatPeriod: HEARTBEAT });
    const lock = await first.acquireLock('deleted');
    expect(lock.deleteLockOnRelease).toBe(true);
    expect(await bed.owner('deleted')).toBe('first');

    expect(await first.releaseLock(lock)).toBe(true);
    expect(lock.state).toBe('released');
    expect(lock.isReleased).toBe(true);
    expect(lock.isExpired()).toBe(true);
    expect(first.hasLock('deleted')).toBe(false);
    expect(await bed.item('deleted')).toBeUndefined();
    // A second release of the same lock is refused without harm.
    expect(await first.releaseLock(lock)).toBe(false);
    await expect(first.sendHeartbeat(lock)).rejects.toBeInstanceOf(LockLostError);

    const started = now();
    const taken = await second.acquireLock('deleted', {
      refreshPeriod: REFRESH,
      additionalTimeToWaitForLock: 0,
      signal: AbortSignal.timeout(10_000),
    });
    expect(now() - started).toBeLessThan(LONG_LEASE / 10);
    expect(taken.ownerName).toBe('second');
    expect(await bed.owner('deleted')).toBe('second');
  }, 20_000);

  it('by mark-released: the item stays with isReleased "1", owner and lease, gets a new RVN, and is re-acquired at once', async () => {
    const first = bed.client({ ownerName: 'first', leaseDuration: LONG_LEASE, heartbeatPeriod: 15_000 });
    // No background heartbeat may change the RVN compared with the table.
    const second = bed.client({ ownerName: 'second', leaseDuration: LEASE, heartbeatPeriod: HEARTBEAT, backgroundHeartbeats: false });
    const lock = await first.acquireLock('kept', { deleteLockOnRelease: false, additionalAttributes: { purpose: 'report', shard: 7 } });
    expect(lock.deleteLockOnRelease).toBe(false);
    const held = await bed.item('kept');
    expect(held?.['isReleased']).toBeUndefined();

    expect(await lock.release()).toBe(true);
    expect(lock.state).toBe('released');

    const released = await bed.item('kept');
    // A new RVN, so that no late heartbeat or replayed release can match the released item.
    const releasedRvn = released?.['recordVersionNumber']?.S;
    expect(releasedRvn).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/);
    expect(releasedRvn).not.toBe(lock.recordVersionNumber);
    expect(released).toEqual({
      key: { S: 'kept' },
      ownerName: { S: 'first' },
      leaseDuration: { S: String(LONG_LEASE) },
      recordVersionNumber: { S: releasedRvn },
      isReleased: { S: '1' },
      purpose: { S: 'report' },
      shard: { N: '7' },
    });
    // A released lock is free: getLock says so, from either client.
    expect(await first.getLock('kept')).toBeUndefined();
    expect(await second.getLock('kept')).toBeUndefined();
    expect(await first.releaseLock(lock)).toBe(false);

    const started = now();
    const taken = await second.acquireLock('kept', {
      refreshPeriod: REFRESH,
      additionalTimeToWaitForLock: 0,
      signal: AbortSignal.timeout(10_000),
    });
    expect(now() - started).toBeLessThan(LONG_LEASE / 10);
    expect(taken.ownerName).toBe('second');
    const retaken = await bed.item('kept');
    expect(retaken?.['ownerName']).toEqual({ S: 'second' });
    expect(retaken?.['leaseDuration']).toEqual({ S: String(LEASE) });
    expect(retaken?.['recordVersionNumber']).toEqual({ S: taken.recordVersionNumber });
    expect(retaken?.['isReleased']).toBeUndefined();
  }, 20_000);

  it('the release option deleteLock overrides the lock’s own deleteLockOnRelease', async () => {
    const client = bed.client({ ownerName: 'chooser', leaseDuration: LEASE, heartbeatPeriod: HEARTBEAT });
    const marked = await client.acquireLock('override-keep');
    expect(await client.releaseLock(marked, { deleteLock: false })).toBe(true);
    expect((await bed.item('override-keep'))?.['isReleased']).toEqual({ S: '1' });

    const deleted = await client.acquireLock('override-delete', { deleteLockOnRelease: false });
    expect(await deleted.release({ deleteLock: true })).toBe(true);
    expect(await bed.item('override-delete')).toBeUndefined();
  }, 20_000);
});

describe('lock data', () => {
  it('round-trips Uint8Array and string data through the item, the Lock and other clients’ snapshots', async () => {
    // Its locks must outlast a dozen requests and two manual heartbeats on a loaded machine.
    const writer = bed.client({ ownerName: 'writer', leaseDuration: LONG_LEASE, heartbeatPeriod: 15_000 });
    const reader = bed.client({ ownerName: 'reader', leaseDuration: LEASE, heartbeatPeriod: HEARTBEAT });
    const binary = bytes(0, 1, 2, 127, 128, 254, 255, 0);

    const binaryLock = await writer.acquireLock('binary', { data: binary });
    expect(binaryLock.data).toEqual(binary);
    expect((await bed.item('binary'))?.['data']).toEqual({ B: binary });
    const binarySnapshot = await reader.getLock('binary');
    expect(binarySnapshot).toBeInstanceOf(LockSnapshot);
    expect(binarySnapshot?.data).toEqual(binary);

    const message = 'héllo, wörld ✓ 🔒';
    const textLock = await writer.acquireLock('text', { data: message });
    expect(text(textLock.data)).toBe(message);
    expect((await bed.item('text'))?.['data']).toEqual({ B: utf8(message) });
    expect(text((await reader.getLock('text'))?.data)).toBe(message);

    // No data: no data attribute at all.
    const bare = await writer.acquireLock('bare');
    expect(bare.data).toBeUndefined();
    expect((await bed.item('bare'))?.['data']).toBeUndefined();

    // The Lock hands out copies: mutating one does not change the lock.
    const copy = binaryLock.data!;
    copy[0] = 99;
    expect(binaryLock.data).toEqual(binary);

    // Heartbeats that replace and delete data.
    await writer.sendHeartbeat(textLock, { data: 'replaced' });
    expect(text(textLock.data)).toBe('replaced');
    expect((await bed.item('text'))?.['data']).toEqual({ B: utf8('replaced') });
    await writer.sendHeartbeat(textLock, { deleteData: true });
    expect(textLock.data).toBeUndefined();
    expect((await bed.item('text'))?.['data']).toBeUndefined();
    // A plain heartbeat leaves data alone.
    await writer.sendHeartbeat(binaryLock);
    expect((await bed.item('binary'))?.['data']).toEqual({ B: binary });
    expect(binaryLock.data).toEqual(binary);
  }, 20_000);

  it('replaceData false carries the previous holder’s data through a released lock', async () => {
    const first = bed.client({ ownerName: 'first', leaseDuration: LEASE, heartbeatPeriod: HEARTBEAT });
    const second = bed.client({ ownerName: 'second', leaseDuration: LEASE, heartbeatPeriod: HEARTBEAT });
    const lock = await first.acquireLock('carried', { data: 'from first', deleteLockOnRelease: false });
    expect(await lock.release()).toBe(true);
    expect((await bed.item('carried'))?.['data']).toEqual({ B: utf8('from first') });

    const next = await second.acquireLock('carried', { data: 'from second', replaceData: false });
    expect(text(next.data)).toBe('from first');
    const stored = await bed.item('carried');
    expect(stored?.['data']).toEqual({ B: utf8('from first') });
    expect(stored?.['ownerName']).toEqual({ S: 'second' });

    // With nothing to carry over, the caller's data is written.
    const fresh = await second.acquireLock('nothing-to-carry', { data: 'own data', replaceData: false });
    expect(text(fresh.data)).toBe('own data');
    expect((await bed.item('nothing-to-carry'))?.['data']).toEqual({ B: utf8('own data') });
  }, 20_000);

  it('replaceData true (the default) replaces the released holder’s data, or drops it when none is given', async () => {
    const first = bed.client({ ownerName: 'first', leaseDuration: LEASE, heartbeatPeriod: HEARTBEAT });
    const second = bed.client({ ownerName: 'second', leaseDuration: LEASE, heartbeatPeriod: HEARTBEAT });
    await (await first.acquireLock('replaced', { data: 'old', deleteLockOnRelease: false })).release();
    const replacing = await second.acquireLock('replaced', { data: 'new', deleteLockOnRelease: false });
    expect(text(replacing.data)).toBe('new');
    expect((await bed.item('replaced'))?.['data']).toEqual({ B: utf8('new') });

    await replacing.release();
    const dropping = await first.acquireLock('replaced');
    expect(dropping.data).toBeUndefined();
    expect((await bed.item('replaced'))?.['data']).toBeUndefined();
  }, 20_000);

  it('release with data (deleteLock false) leaves that data on the released item', async () => {
    const first = bed.client({ ownerName: 'first', leaseDuration: LEASE, heartbeatPeriod: HEARTBEAT });
    const second = bed.client({ ownerName: 'second', leaseDuration: LEASE, heartbeatPeriod: HEARTBEAT });
    const lock = await first.acquireLock('handoff', { data: 'while held' });
    const rvn = lock.recordVersionNumber;
    // Not allowed together with deleting the item.
    await expect(first.releaseLock(lock, { data: 'x' })).rejects.toBeInstanceOf(InvalidArgumentError);
    expect(lock.state).toBe('held');

    expect(await first.releaseLock(lock, { deleteLock: false, data: bytes(9, 8, 7) })).toBe(true);
    const stored = await bed.item('handoff');
    expect(stored?.['isReleased']).toEqual({ S: '1' });
    expect(stored?.['data']).toEqual({ B: bytes(9, 8, 7) });
    expect(stored?.['recordVersionNumber']?.S).not.toBe(rvn);
    expect(stored?.['ownerName']).toEqual({ S: 'first' });

    const next = await second.acquireLock('handoff', { replaceData: false });
    expect(next.data).toEqual(bytes(9, 8, 7));
  }, 20_000);
});

describe('acquireOnlyIfLockAlreadyExists', () => {
  it('no item: LockNotGrantedError after the short wait, and no item is created', async () => {
    const client = bed.client({ ownerName: 'cautious', leaseDuration: LEASE, heartbeatPeriod: HEARTBEAT });
    const started = now();
    const error = await rejectionOf(
      client.acquireLock('missing', { acquireOnlyIfLockAlreadyExists: true, refreshPeriod: REFRESH, additionalTimeToWaitForLock: 300 }),
    );
    const waited = now() - started;
    expect(error).toBeInstanceOf(LockNotGrantedError);
    expect((error as LockNotGrantedError).message).toContain('does not exist');
    expect(waited).toBeGreaterThanOrEqual(300);
    expect(waited).toBeLessThan(LEASE * 5);
    expect(await bed.item('missing')).toBeUndefined();
    expect(client.hasLock('missing')).toBe(false);
    expect(await client.tryAcquireLock('missing', { acquireOnlyIfLockAlreadyExists: true, additionalTimeToWaitForLock: 0 })).toBeUndefined();
  }, 20_000);

  it('released item: acquired at once', async () => {
    const first = bed.client({ ownerName: 'first', leaseDuration: LONG_LEASE, heartbeatPeriod: 15_000 });
    const cautious = bed.client({ ownerName: 'cautious', leaseDuration: LEASE, heartbeatPeriod: HEARTBEAT });
    await (await first.acquireLock('exists', { deleteLockOnRelease: false })).release();

    const lock = await cautious.acquireLock('exists', {
      acquireOnlyIfLockAlreadyExists: true,
      refreshPeriod: REFRESH,
      additionalTimeToWaitForLock: 0,
      signal: AbortSignal.timeout(10_000),
    });
    expect(lock.ownerName).toBe('cautious');
    expect(await bed.owner('exists')).toBe('cautious');
    expect((await bed.item('exists'))?.['isReleased']).toBeUndefined();
  }, 20_000);
});

describe('close()', () => {
  it('releases every held lock, may be called twice, and refuses new work', async () => {
    const client = new LockClient({
      dynamoDBConfig: localClientConfig({ credentials: { accessKeyId: 'AKIDcloser', secretAccessKey: 'closer' } }),
      tableName: bed.tableName,
      ownerName: 'closer',
      leaseDuration: LONG_LEASE,
      heartbeatPeriod: 15_000,
    });
    try {
      const a = await client.acquireLock('close-a');
      const b = await client.acquireLock('close-b', { data: 'b' });
      const c = await client.acquireLock('close-c', { deleteLockOnRelease: false });
      expect(await bed.owner('close-a')).toBe('closer');

      await client.close();

      for (const lock of [a, b, c]) expect(lock.state).toBe('released');
      expect(await bed.item('close-a')).toBeUndefined();
      expect(await bed.item('close-b')).toBeUndefined();
      expect((await bed.item('close-c'))?.['isReleased']).toEqual({ S: '1' });
      expect(client.hasLock('close-a')).toBe(false);

      await expect(client.close()).resolves.toBeUndefined();
      await expect(client.acquireLock('close-d')).rejects.toBeInstanceOf(LockClientClosedError);
      await expect(client.tryAcquireLock('close-d')).rejects.toBeInstanceOf(LockClientClosedError);
      await expect(client.getLock('close-a')).rejects.toBeInstanceOf(LockClientClosedError);
      expect(await bed.item('close-d')).toBeUndefined();
      // Releasing a lock close() already released is a harmless no-op.
      expect(await a.release()).toBe(false);
    } finally {
      await client.close().catch(() => undefined);
    }
  }, 20_000);

  it('stops heartbeats: nothing writes to a released lock after close()', async () => {
    const client = bed.client({ ownerName: 'quiet', leaseDuration: LEASE, heartbeatPeriod: HEARTBEAT });
    const other = bed.client({ ownerName: 'other', leaseDuration: LEASE, heartbeatPeriod: HEARTBEAT });
    await client.acquireLock('quiet', { deleteLockOnRelease: false });
    await client.close();
    const released = await bed.item('quiet');
    expect(released?.['isReleased']).toEqual({ S: '1' });
    await sleep(3 * HEARTBEAT);
    expect(await bed.item('quiet')).toEqual(released);
    // And someone else can take it.
    expect((await other.acquireLock('quiet')).ownerName).toBe('other');
  }, 20_000);

  it('makes an acquire that is waiting on a held lock reject with LockClientClosedError', async () => {
    const holder = bed.client({ ownerName: 'holder', leaseDuration: LIVE_LEASE_MS, heartbeatPeriod: HEARTBEAT });
    const waiter = bed.client({ ownerName: 'waiter', leaseDuration: LEASE, heartbeatPeriod: HEARTBEAT });
    await holder.acquireLock('contended');

    const waiting = watch(waiter.acquireLock('contended', { refreshPeriod: 5_000, additionalTimeToWaitForLock: Infinity }));
    await sleep(300);
    expect(waiting.settled()).toBe(false);
    const closedAt = now();
    await waiter.close();

    await expect(waiting.promise).rejects.toBeInstanceOf(LockClientClosedError);
    expect(waiting.settledAt()! - closedAt).toBeLessThan(2_000);
    expect(await bed.owner('contended')).toBe('holder');
  }, 20_000);

  it('attempts every release even when one fails, and reports the failures in LockClientCloseError', async () => {
    const recorder = recording(bed.dynamoDBClient('unlucky'));
    const client = bed.client({ ownerName: 'unlucky', leaseDuration: LIVE_LEASE_MS, heartbeatPeriod: HEARTBEAT }, recorder.dynamoDB);
    const doomed = await client.acquireLock('close-fails');
    const fine = await client.acquireLock('close-works');
    const alsoFine = await client.acquireLock('close-works-too', { deleteLockOnRelease: false });
    const injected = Object.assign(new Error('injected release failure'), { name: 'InternalServerError', $metadata: { httpStatusCode: 500 } });
    recorder.hold = (command) => {
      const key = (command.input['Key'] as { key?: { S?: string } } | undefined)?.key?.S;
      if (command.name === 'DeleteItemCommand' && key === 'close-fails') throw injected;
    };

    const error = await rejectionOf(client.close());

    expect(error).toBeInstanceOf(LockClientCloseError);
    expect((error as LockClientCloseError).errors).toEqual([injected]);
    expect(await bed.item('close-works')).toBeUndefined();
    expect((await bed.item('close-works-too'))?.['isReleased']).toEqual({ S: '1' });
    expect(fine.state).toBe('released');
    expect(alsoFine.state).toBe('released');
    // The failed one is left to expire: no longer tracked, and nothing heartbeats it any more.
    expect(doomed.state).toBe('lost');
    expect(client.hasLock('close-fails')).toBe(false);
    const left = await bed.rvn('close-fails');
    expect(left).toBe(doomed.recordVersionNumber);
    await sleep(3 * HEARTBEAT);
    expect(await bed.rvn('close-fails')).toBe(left);
    await expect(client.acquireLock('after')).rejects.toBeInstanceOf(LockClientClosedError);
  }, 20_000);
});

describe('updateExistingLockRecord', () => {
  it('takes a released item with UpdateItem: keeps attributes it does not set and removes isReleased', async () => {
    const first = bed.client({ ownerName: 'first', leaseDuration: LONG_LEASE, heartbeatPeriod: 15_000 });
    // No background heartbeat may change the RVN compared with the table.
    const second = bed.client({ ownerName: 'second', leaseDuration: LEASE, heartbeatPeriod: HEARTBEAT, backgroundHeartbeats: false });
    await (await first.acquireLock('updated', { deleteLockOnRelease: false, additionalAttributes: { keptAttribute: 'still here' } })).release();

    const lock = await second.acquireLock('updated', {
      updateExistingLockRecord: true,
      additionalAttributes: { added: 1 },
      signal: AbortSignal.timeout(10_000),
    });
    const stored = await bed.item('updated');
    expect(stored).toEqual({
      key: { S: 'updated' },
      ownerName: { S: 'second' },
      leaseDuration: { S: String(LEASE) },
      recordVersionNumber: { S: lock.recordVersionNumber },
      keptAttribute: { S: 'still here' },
      added: { N: '1' },
    });
  }, 20_000);
});
