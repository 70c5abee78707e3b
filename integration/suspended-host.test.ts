/**
 * A host suspended past the lease: the monotonic clock stands still while
 * the wall clock (and every other client's lease timing) runs on. The holder
 * must count that time against its safe time.
 */
import { expect, it } from '@jest/globals';
import type { MonotonicClock } from '../src/index.js';
import { LockLostError } from '../src/index.js';
import { useLockTestBed } from './support/lock-test-bed-hook.js';
import { abortOf, thrownBy } from './support/lock-events.js';

const bed = useLockTestBed('suspended');

/** The system's clocks, with a suspend the test can add: wall time that monotonic time did not see. */
function suspendableClock(): { clock: MonotonicClock; suspend(ms: number): void } {
  let slept = 0;
  return {
    clock: { now: () => performance.now(), wallNow: () => Date.now() + slept },
    suspend: (ms) => {
      slept += ms;
    },
  };
}

it('a holder resumed after its lease fails throwIfLost at once, and its signal aborts by the next heartbeat', async () => {
  const { clock, suspend } = suspendableClock();
  const client = bed.client({ ownerName: 'sleeper', leaseDuration: 20_000, heartbeatPeriod: 500, clock });
  const lock = await client.acquireLock('job');
  lock.throwIfLost();

  suspend(20_000);

  expect(thrownBy(() => lock.throwIfLost())).toMatchObject({ name: 'LockLostError', kind: 'expired' });
  const { reason } = await abortOf(lock.signal, 5_000);
  expect(reason).toBeInstanceOf(LockLostError);
}, 30_000);

it('the wall clock stepping back never lengthens a lock', async () => {
  const { clock, suspend } = suspendableClock();
  const client = bed.client({ ownerName: 'stepped', leaseDuration: 1_000, backgroundHeartbeats: false, clock });
  const lock = await client.acquireLock('job');

  suspend(-60_000);

  const { reason } = await abortOf(lock.signal, 5_000);
  expect(reason).toMatchObject({ kind: 'expired' });
}, 30_000);
