/**
 * A host suspended past the lease: the monotonic clock (and every timer of
 * the holder) stands still while the wall clock, and every other client's
 * lease timing, run on. The holder must count that time against its safe
 * time: throwIfLost() at once on resume, the signal within a heartbeat
 * period (at most a second), before it could overlap the next holder.
 */
import { describe, expect, it } from '@jest/globals';
import type { MonotonicClock } from '../src/index.js';
import { LockLostError } from '../src/index.js';
import { useLockTestBed } from '../test-kit/jest/lock-test-bed-hook.js';
import { abortOf, thrownBy } from '../test-kit/jest/lock-events.js';
import { sleep } from '../test-kit/test-locks.js';

const bed = useLockTestBed('suspended');

/** The holder's clocks, with a suspend the test controls: monotonic time stands still from suspend() to resume(). */
function suspendableClock(): { clock: MonotonicClock; suspend(): void; resume(): void } {
  let slept = 0;
  let suspendedAt: number | undefined;
  return {
    clock: { now: () => (suspendedAt ?? performance.now()) - slept, wallNow: () => Date.now() },
    suspend: () => {
      suspendedAt = performance.now();
    },
    resume: () => {
      slept += performance.now() - (suspendedAt ?? performance.now());
      suspendedAt = undefined;
    },
  };
}

describe.each([
  ['without background heartbeats', { backgroundHeartbeats: false }],
  ['with background heartbeats', { heartbeatPeriod: 1_000 }],
])('a holder resumed after a host suspend longer than its lease (%s)', (_, settings) => {
  it('fails throwIfLost and has its signal aborted before it could overlap the next holder', async () => {
    const { clock, suspend, resume } = suspendableClock();
    const holder = bed.client({ ownerName: 'sleeper', leaseDuration: 4_000, clock, ...settings });
    const lock = await holder.acquireLock('job');
    suspend();
    const waiter = bed.client({ ownerName: 'waiter', leaseDuration: 4_000, heartbeatPeriod: 1_000 });
    const theirs = await waiter.acquireLock('job', { refreshPeriod: 100, additionalTimeToWaitForLock: 10_000 });
    resume();
    await sleep(100); // the event loop has run its due timers
    theirs.throwIfLost();
    // Read before throwIfLost, which would end the lock itself.
    const holderSignalAborted = lock.signal.aborted;
    expect(thrownBy(() => lock.throwIfLost())).toBeInstanceOf(LockLostError);
    expect({ holderSignalAborted, waiterHolds: theirs.state }).toEqual({ holderSignalAborted: true, waiterHolds: 'held' });
  }, 30_000);
});

it('a wall clock that jumps ahead (a resume) ends the lock through the signal, without any call', async () => {
  let ahead = 0;
  const clock: MonotonicClock = { now: () => performance.now(), wallNow: () => Date.now() + ahead };
  // Heartbeats are 10 s apart: only the client's clock watch (every second) can end it within the 5 s below.
  const client = bed.client({ ownerName: 'jumped', leaseDuration: 40_000, heartbeatPeriod: 10_000, clock });
  const lock = await client.acquireLock('job');

  ahead = 40_000;

  const { reason } = await abortOf(lock.signal, 5_000);
  expect(reason).toMatchObject({ name: 'LockLostError', kind: 'expired' });
}, 30_000);

it('the wall clock stepping back never lengthens a lock', async () => {
  let ahead = 0;
  const clock: MonotonicClock = { now: () => performance.now(), wallNow: () => Date.now() + ahead };
  const client = bed.client({ ownerName: 'stepped', leaseDuration: 1_000, backgroundHeartbeats: false, clock });
  const lock = await client.acquireLock('job');

  ahead = -60_000;

  const { reason } = await abortOf(lock.signal, 5_000);
  expect(reason).toMatchObject({ kind: 'expired' });
}, 30_000);
