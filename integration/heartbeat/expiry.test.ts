/**
 * A lock whose heartbeats get no answer must be given up before its lease
 * runs out, so that the holder stops acting before anyone else may take it
 * over; and throwIfLost() must say so even when the timer that would abort
 * the signal has not run yet.
 */
import { describe, expect, it } from '@jest/globals';
import { LockLostError } from '../../src/index.js';
import { useFaultBed } from '../../test-kit/jest/fault-bed.js';
import { abortOf, expectLostOnce, recordEvents, thrownBy } from '../../test-kit/jest/lock-events.js';
import { waitUntil, watch } from '../../test-kit/test-locks.js';

const faults = useFaultBed('hb-expiry');

describe('heartbeats that get no answer', () => {
  const LEASE_MS = 2_000;
  // A wide margin, so that a late timer on a busy machine still lands inside it.
  const SAFETY_MARGIN_MS = 600;

  it('abort lock.signal with kind "expired" after lease − safetyMargin, before the lease runs out, endangered first', async () => {
    const network = await faults.proxied('silenced');
    const client = faults.bed.client(
      { ownerName: 'silenced', leaseDuration: LEASE_MS, heartbeatPeriod: 400, safetyMargin: SAFETY_MARGIN_MS },
      network.dynamoDB,
    );
    const events = recordEvents(client);
    const lock = await client.acquireLock('silenced');
    let lookupTimeAtAbort = NaN;
    lock.signal.addEventListener('abort', () => (lookupTimeAtAbort = lock.lookupTime));
    const lookupTimeBefore = lock.lookupTime;

    network.proxy.blackhole();
    const { reason, at: abortedAt } = await abortOf(lock.signal, LEASE_MS + 3_000);

    expect(reason).toBeInstanceOf(LockLostError);
    expect((reason as LockLostError).kind).toBe('expired');
    // A heartbeat already answered when the blackhole began may have moved lookupTime on, never back.
    expect(lookupTimeAtAbort).toBeGreaterThanOrEqual(lookupTimeBefore);
    expect(abortedAt).toBeGreaterThanOrEqual(lookupTimeAtAbort + LEASE_MS - SAFETY_MARGIN_MS);
    expect(abortedAt).toBeLessThan(lookupTimeAtAbort + LEASE_MS);

    const endangered = events.of('endangered', lock);
    expect(endangered).toHaveLength(1);
    expect(endangered[0]!.at).toBeLessThan(abortedAt);
    expect(events.of('heartbeatError', lock).length).toBeGreaterThanOrEqual(1);
    expectLostOnce(events, lock, reason);
    expect(thrownBy(() => lock.throwIfLost())).toBe(reason);
    expect(lock.state).toBe('lost');
    // Nobody answered: the table still names this client until the lease lapses.
    expect(await faults.bed.owner('silenced')).toBe('silenced');
  }, 20_000);
});

describe('throwIfLost()', () => {
  it('reads the clock itself: after a pause longer than the lease it throws "expired" before any timer ran', async () => {
    const LEASE_MS = 1_000;
    const client = faults.bed.client({ ownerName: 'paused', leaseDuration: LEASE_MS, heartbeatPeriod: 250 });
    const events = recordEvents(client);
    const lock = await client.acquireLock('paused');
    lock.throwIfLost(); // held: does not throw

    // A pause the event loop cannot see coming (a long GC, a stopped VM): nothing else runs meanwhile.
    const pauseEnds = performance.now() + LEASE_MS + 200;
    while (performance.now() < pauseEnds) {
      // busy-wait
    }
    const abortedBeforeTheCall = lock.signal.aborted;
    const stateBeforeTheCall = lock.state;
    const thrown = thrownBy(() => lock.throwIfLost());

    expect(abortedBeforeTheCall).toBe(false);
    expect(stateBeforeTheCall).toBe('held');
    expect(thrown).toBeInstanceOf(LockLostError);
    expect((thrown as LockLostError).kind).toBe('expired');
    // The check gave the lock up on the spot: signal, state and event agree with what was thrown.
    expect(lock.signal.aborted).toBe(true);
    expect(lock.signal.reason).toBe(thrown);
    expect(lock.state).toBe('lost');
    expectLostOnce(events, lock, thrown);
  }, 20_000);
});

describe('close() while DynamoDB does not answer', () => {
  it('settles by the time the locks would have lapsed anyway, even when the SDK has no request timeout', async () => {
    const LEASE_MS = 2_000;
    const network = await faults.proxied('closing-silenced', { requestTimeout: 0 });
    const client = faults.bed.client({ ownerName: 'closing-silenced', leaseDuration: LEASE_MS, heartbeatPeriod: 400 }, network.dynamoDB);
    await client.acquireLock('closing-silenced');

    network.proxy.blackhole();
    const closing = watch(client.close());
    await waitUntil('close() settles', () => closing.settled(), { timeoutMs: LEASE_MS + 1_000 }).catch(() => undefined);

    // Settled, released or not: the lock has lapsed by now, and a process shutting down must not hang.
    expect(closing.settled()).toBe(true);
  }, 20_000);
});
