/**
 * A manual heartbeat that changes the lease: the lease in force bounds the
 * holder's safe time, whether its write was confirmed or its outcome is
 * unknown, and the safety margin follows the new lease.
 */
import { describe, expect, it } from '@jest/globals';
import type { MonotonicClock } from '../src/index.js';
import { LockLostError } from '../src/index.js';
import { useFaultBed } from '../test-kit/jest/fault-bed.js';
import {
  dynamoDBErrorReply,
  operationOf,
  type FaultProxy,
  type ProxiedExchange,
  type ProxiedRequest,
  type RequestFault,
} from '../test-kit/fault-proxy.js';
import { thrownBy } from '../test-kit/jest/lock-events.js';
import { rejectionOf, sleep, waitUntil } from '../test-kit/test-locks.js';

const faults = useFaultBed('lease-changes');

const THROTTLED: RequestFault = { action: 'respond', reply: dynamoDBErrorReply('ThrottlingException') };

const isUpdateItem = (request: ProxiedRequest): boolean => operationOf(request) === 'UpdateItem';

describe.each<[string, boolean, (proxy: FaultProxy) => Promise<ProxiedExchange>]>([
  // No SDK retries: the write is applied once, and only its reply is lost.
  ['no SDK retries', false, (proxy: FaultProxy) => proxy.dropNextReply(isUpdateItem)],
  // The SDK's defaults: the first attempt is applied, its reply lost, and every retry throttled.
  ['the SDK defaults, retries throttled', true, (proxy: FaultProxy) => proxy.loseReplyThenRetries(isUpdateItem, THROTTLED)],
])('a heartbeat that shortened the lease and lost its reply (%s)', (_, sdkDefaults, loseReply) => {
  it('bounds the holder by the shorter lease: when a waiter takes over, the holder can no longer pass throwIfLost', async () => {
    const network = await faults.proxied('shortener', { sdkDefaults });
    const holder = faults.bed.client({ ownerName: 'shortener', leaseDuration: 8_000, backgroundHeartbeats: false }, network.dynamoDB);
    const lock = await holder.acquireLock('job');

    const lost = loseReply(network.proxy);
    await rejectionOf(lock.sendHeartbeat({ leaseDuration: 1_500 }));
    expect((await lost).swallowedStatusLine).toMatch(/^HTTP\/1\.1 200 /);
    expect((await faults.bed.item('job'))?.['leaseDuration']?.S).toBe('1500');

    // The waiter reads the 1.5 s lease from the item and takes over after it, long before 8 s.
    const waiter = faults.bed.client({ ownerName: 'waiter', leaseDuration: 8_000, heartbeatPeriod: 1_000 });
    const theirs = await waiter.acquireLock('job', { refreshPeriod: 100, additionalTimeToWaitForLock: 5_000 });
    expect(theirs.state).toBe('held');
    expect(thrownBy(() => lock.throwIfLost())).toBeInstanceOf(LockLostError);
    expect(lock.signal.aborted).toBe(true);
  }, 30_000);
});

describe('a confirmed heartbeat that shortened the lease', () => {
  it('gives the lock up at the new lease minus the new margin, not the old margin', async () => {
    let now = 0;
    const clock: MonotonicClock = { now: () => now };
    const client = faults.bed.client({ ownerName: 'margin', leaseDuration: 100_000, backgroundHeartbeats: false, clock });
    const lock = await client.acquireLock('job');

    now = 1_000;
    await lock.sendHeartbeat({ leaseDuration: 10_000 });
    // A tenth of the new lease is the margin: safe until 1 000 + 10 000 - 1 000. (The old margin, 10 000, would end it at once.)
    now = 9_900;
    lock.throwIfLost();
    expect(lock.state).toBe('held');
    now = 10_000;
    expect(thrownBy(() => lock.throwIfLost())).toMatchObject({ name: 'LockLostError', kind: 'expired' });
  }, 30_000);
});

describe('a background heartbeat queued behind a manual one that changed the lease', () => {
  it('a background heartbeat due while a lease-changing manual heartbeat is in flight keeps the new lease', async () => {
    const network = await faults.proxied('changer', { sdkDefaults: true });
    const client = faults.bed.client({ ownerName: 'changer', leaseDuration: 12_000, heartbeatPeriod: 1_500 }, network.dynamoDB);
    const lock = await client.acquireLock('job');
    // The manual heartbeat (lease 4 s) takes 1.25 s on the wire; the background one falls due meanwhile.
    void network.proxy.injectOnce((request) => operationOf(request) === 'UpdateItem' && request.body.toString('utf8').includes('"S":"4000"'), {
      action: 'forward',
      delayMs: 1_250,
    });
    await sleep(750);
    await lock.sendHeartbeat({ leaseDuration: 4_000 });
    expect(lock.leaseDuration).toBe(4_000); // confirmed
    const afterManual = lock.recordVersionNumber;

    // The background heartbeat that was queued behind it now goes out.
    await waitUntil('a background heartbeat after the manual one', () => lock.recordVersionNumber !== afterManual);
    expect(lock.leaseDuration).toBe(4_000);
    expect((await faults.bed.item('job'))?.['leaseDuration']?.S).toBe('4000');
  }, 30_000);
});
