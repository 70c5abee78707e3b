/**
 * Two or more clients wanting one lock (PROTOCOL.md §5.2, §5.4): waiting,
 * giving up with LockNotGrantedError, handoff on release, reentrancy,
 * heartbeats keeping a lock across many leases, and AbortSignal.
 */
import { describe, expect, it } from '@jest/globals';
import { LockCurrentlyUnavailableError, LockNotGrantedError, type Lock } from '../../src/index.js';
import { now, recording, rejectionOf, sleep, watch } from '../../test-kit/test-locks.js';
import { useLockTestBed } from '../../test-kit/jest/lock-test-bed-hook.js';
import { LIVE_LEASE_MS } from '../../test-kit/live-lease.js';

const LEASE = 1_000;
const HEARTBEAT = 250;
const REFRESH = 100;

const bed = useLockTestBed('lock-contention');

describe('two clients contending for one key', () => {
  it('the second waits while the first heartbeats, fails naming the holder, and acquires once the first releases', async () => {
    const alpha = bed.client({ ownerName: 'alpha', leaseDuration: LIVE_LEASE_MS, heartbeatPeriod: HEARTBEAT });
    const beta = bed.client({ ownerName: 'beta', leaseDuration: LEASE, heartbeatPeriod: HEARTBEAT });

    const lockA = await alpha.acquireLock('shared');
    const firstRvn = lockA.recordVersionNumber;
    expect(await bed.owner('shared')).toBe('alpha');

    const started = now();
    const error = await rejectionOf(beta.acquireLock('shared', { refreshPeriod: REFRESH, additionalTimeToWaitForLock: 500 }));
    const waited = now() - started;

    expect(error).toBeInstanceOf(LockNotGrantedError);
    const notGranted = error as LockNotGrantedError;
    expect(notGranted.partitionKey).toBe('shared');
    expect(notGranted.sortKey).toBeUndefined();
    expect(notGranted.holder).toMatchObject({ ownerName: 'alpha', leaseDuration: LIVE_LEASE_MS, isReleased: false });
    expect(notGranted.message).toContain('alpha');
    // The budget is the holder's lease plus the additional time; the wait cannot end earlier.
    expect(waited).toBeGreaterThanOrEqual(LIVE_LEASE_MS + 500);
    // Alpha heartbeated all along: the waiter saw RVNs written after the acquisition and never took over.
    expect(notGranted.holder?.recordVersionNumber).not.toBe(firstRvn);
    expect(lockA.recordVersionNumber).not.toBe(firstRvn);
    expect(lockA.state).toBe('held');
    expect(alpha.hasLock('shared')).toBe(true);
    expect(beta.hasLock('shared')).toBe(false);
    expect(await bed.owner('shared')).toBe('alpha');

    // Handoff: beta waits again, alpha releases, beta gets the lock.
    const waiting = watch(beta.acquireLock('shared', { refreshPeriod: REFRESH, additionalTimeToWaitForLock: 10_000 }));
    await sleep(400);
    expect(waiting.settled()).toBe(false);
    const releasedAt = now();
    expect(await alpha.releaseLock(lockA)).toBe(true);
    const lockB = await waiting.promise;

    expect(waiting.settledAt()).toBeGreaterThan(releasedAt);
    expect(lockA.state).toBe('released');
    expect(alpha.hasLock('shared')).toBe(false);
    expect(lockB.ownerName).toBe('beta');
    expect(lockB.state).toBe('held');
    expect(beta.hasLock('shared')).toBe(true);
    const stored = await bed.item('shared');
    expect(stored?.['ownerName']).toEqual({ S: 'beta' });
    expect(stored?.['isReleased']).toBeUndefined();
  }, 20_000);

  it('two clients racing for a free key: exactly one wins', async () => {
    const clients = ['racer-1', 'racer-2', 'racer-3'].map((ownerName) =>
      bed.client({ ownerName, leaseDuration: LEASE, heartbeatPeriod: HEARTBEAT }),
    );
    const outcomes = await Promise.allSettled(clients.map((client) => client.acquireLock('race', { shouldSkipBlockingWait: true })));

    const winners = outcomes.filter((o): o is PromiseFulfilledResult<Lock> => o.status === 'fulfilled');
    const losers = outcomes.filter((o): o is PromiseRejectedResult => o.status === 'rejected');
    expect(winners).toHaveLength(1);
    expect(losers).toHaveLength(2);
    for (const loser of losers) expect(loser.reason).toBeInstanceOf(LockCurrentlyUnavailableError);
    const winner = winners[0]!.value;
    expect(await bed.owner('race')).toBe(winner.ownerName);
    expect(clients.filter((client) => client.hasLock('race')).map((client) => client.ownerName)).toEqual([winner.ownerName]);
  }, 20_000);
});

describe('reentrancy', () => {
  it('reentrant: returns the same Lock object without any DynamoDB request; the RVN stays', async () => {
    const recorder = recording(bed.dynamoDBClient('solo'));
    const client = bed.client({ ownerName: 'solo', leaseDuration: 2_000, heartbeatPeriod: 500, backgroundHeartbeats: false }, recorder.dynamoDB);

    const lock = await client.acquireLock('reentrant');
    const rvn = lock.recordVersionNumber;
    expect(await bed.rvn('reentrant')).toBe(rvn);
    const requestsBefore = recorder.sent.length;

    const again = await client.acquireLock('reentrant', { reentrant: true });
    const thrice = await client.tryAcquireLock('reentrant', { reentrant: true });

    expect(again).toBe(lock);
    expect(thrice).toBe(lock);
    expect(recorder.sent.length).toBe(requestsBefore);
    expect(lock.recordVersionNumber).toBe(rvn);
    expect(await bed.rvn('reentrant')).toBe(rvn);
    expect(lock.state).toBe('held');
  }, 20_000);

  it('non-reentrant: a second acquire by the same client waits and fails with LockNotGrantedError while heartbeats run', async () => {
    const client = bed.client({ ownerName: 'self', leaseDuration: LIVE_LEASE_MS, heartbeatPeriod: HEARTBEAT });
    const lock = await client.acquireLock('not-reentrant');
    const firstRvn = lock.recordVersionNumber;

    const error = await rejectionOf(client.acquireLock('not-reentrant', { refreshPeriod: REFRESH, additionalTimeToWaitForLock: 300 }));

    expect(error).toBeInstanceOf(LockNotGrantedError);
    expect((error as LockNotGrantedError).holder?.ownerName).toBe('self');
    // Heartbeats went on during the wait, and the original lock is still the held one.
    expect((error as LockNotGrantedError).holder?.recordVersionNumber).not.toBe(firstRvn);
    expect(lock.recordVersionNumber).not.toBe(firstRvn);
    expect(lock.state).toBe('held');
    expect(client.hasLock('not-reentrant')).toBe(true);
    expect(await client.getLock('not-reentrant')).toBe(lock);
    expect(await bed.owner('not-reentrant')).toBe('self');
    expect(await lock.release()).toBe(true);
    expect(await bed.item('not-reentrant')).toBeUndefined();
  }, 20_000);
});

describe('heartbeats keep a lock', () => {
  it('across two lease durations: pollers never acquire it and the RVN keeps changing', async () => {
    const holder = bed.client({ ownerName: 'keeper', leaseDuration: LIVE_LEASE_MS, heartbeatPeriod: HEARTBEAT });
    const blocker = bed.client({ ownerName: 'blocking-poller', leaseDuration: LEASE, heartbeatPeriod: HEARTBEAT });
    const skipper = bed.client({ ownerName: 'skipping-poller', leaseDuration: LEASE, heartbeatPeriod: HEARTBEAT });

    const lock = await holder.acquireLock('kept');
    const firstRvn = lock.recordVersionNumber;
    const firstLookup = lock.lookupTime;
    const heldUntil = now() + 2 * LIVE_LEASE_MS + 300;

    // A blocking waiter willing to wait forever, stopped by a signal at the end.
    const stop = new AbortController();
    const stopReason = new Error('poller gave up');
    const blocking = watch(blocker.acquireLock('kept', { refreshPeriod: REFRESH, additionalTimeToWaitForLock: Infinity, signal: stop.signal }));

    // A skip-wait poller, and raw reads of the RVN.
    const rvns = new Set<string>();
    let polls = 0;
    while (now() < heldUntil) {
      const got = await skipper.tryAcquireLock('kept', { shouldSkipBlockingWait: true });
      expect(got).toBeUndefined();
      polls++;
      const rvn = await bed.rvn('kept');
      expect(rvn).toBeDefined();
      rvns.add(rvn!);
      expect(blocking.settled()).toBe(false);
      await sleep(200);
    }
    stop.abort(stopReason);

    await expect(blocking.promise).rejects.toBe(stopReason);
    expect(polls).toBeGreaterThanOrEqual(5);
    // The first poll may still see the acquisition's RVN; the rest are heartbeats'.
    rvns.delete(firstRvn);
    expect(rvns.size).toBeGreaterThanOrEqual(5);
    expect(lock.state).toBe('held');
    expect(lock.isExpired()).toBe(false);
    expect(lock.lookupTime).toBeGreaterThan(firstLookup);
    expect(holder.hasLock('kept')).toBe(true);
    expect(blocker.hasLock('kept')).toBe(false);
    expect(skipper.hasLock('kept')).toBe(false);
    expect(await bed.owner('kept')).toBe('keeper');
  }, 30_000);
});

describe('AbortSignal', () => {
  it('an acquire waiting on a held lock rejects at once with the signal reason; the aborter holds nothing', async () => {
    const holder = bed.client({ ownerName: 'holder', leaseDuration: LIVE_LEASE_MS, heartbeatPeriod: HEARTBEAT });
    const aborter = bed.client({ ownerName: 'aborter', leaseDuration: LEASE, heartbeatPeriod: HEARTBEAT });
    await holder.acquireLock('abortable');

    const controller = new AbortController();
    const reason = new Error('caller gave up');
    // A long refresh period: only an abortable sleep can end the wait promptly.
    const waiting = watch(
      aborter.acquireLock('abortable', { refreshPeriod: 5_000, additionalTimeToWaitForLock: Infinity, signal: controller.signal }),
    );
    await sleep(300);
    expect(waiting.settled()).toBe(false);
    const abortedAt = now();
    controller.abort(reason);

    await expect(waiting.promise).rejects.toBe(reason);
    expect(waiting.settledAt()! - abortedAt).toBeLessThan(2_000);
    expect(aborter.hasLock('abortable')).toBe(false);
    expect(await bed.owner('abortable')).toBe('holder');

    // An already aborted signal fails before anything else.
    const early = new Error('aborted before the call');
    await expect(aborter.acquireLock('other-key', { signal: AbortSignal.abort(early) })).rejects.toBe(early);
    expect(await bed.item('other-key')).toBeUndefined();
  }, 20_000);

  it('aborted while the winning write is in flight: rejects with the reason and does not leave the lock held', async () => {
    const recorder = recording(bed.dynamoDBClient('late-aborter'));
    const client = bed.client({ ownerName: 'late-aborter', leaseDuration: LEASE, heartbeatPeriod: HEARTBEAT }, recorder.dynamoDB);
    const controller = new AbortController();
    const reason = new Error('aborted mid-write');
    let putSeen = false;
    recorder.hold = async (command) => {
      if (command.name !== 'PutItemCommand') return;
      putSeen = true;
      controller.abort(reason);
      await sleep(100);
    };

    await expect(client.acquireLock('mid-write', { signal: controller.signal })).rejects.toBe(reason);
    expect(putSeen).toBe(true);
    expect(client.hasLock('mid-write')).toBe(false);
    expect(await client.getLock('mid-write')).toBeUndefined();
    expect(await bed.item('mid-write')).toBeUndefined();
  }, 20_000);
});
