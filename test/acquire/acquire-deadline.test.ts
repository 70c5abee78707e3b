/**
 * AcquireDeadline: an acquisition waits `additionalTimeToWaitForLock` plus
 * the first holder's lease, and its requests are cut off a grace past that.
 * Fake timers drive setTimeout and performance.now(), so `systemClock`
 * moves with them.
 */
import { describe, expect, it } from '@jest/globals';
import { AcquireDeadline } from '../../src/acquire/acquire-deadline.js';
import { systemClock } from '../../src/clock.js';
import { useFakeTime } from '../../test-kit/jest/fake-time.js';

const { advanceTo } = useFakeTime();

/** A queue for turns that is always moving. */
const queueMovedAt = (): number => systemClock.now();

describe('AcquireDeadline', () => {
  it('passes after the wait, and cuts requests off a grace later', async () => {
    using deadline = new AcquireDeadline({ clock: systemClock, waitMs: 1_000, graceMs: 500, queueMovedAt });
    await advanceTo(1_000);
    expect(deadline.passed).toBe(false);
    await advanceTo(1_001);
    expect(deadline.passed).toBe(true);
    await advanceTo(1_499);
    expect(deadline.cutOff).toBe(false);
    await advanceTo(1_500);
    expect(deadline.cutOff).toBe(true);
    expect(deadline.requestSignal.aborted).toBe(true);
    expect((deadline.requestSignal.reason as DOMException).name).toBe('TimeoutError');
  });

  it('adds the lease of the first holder seen, and no later one', async () => {
    using deadline = new AcquireDeadline({ clock: systemClock, waitMs: 1_000, graceMs: 500, queueMovedAt });
    deadline.addHolderLease(2_000);
    deadline.addHolderLease(60_000);
    await advanceTo(3_000);
    expect(deadline.passed).toBe(false);
    await advanceTo(3_499);
    expect(deadline.cutOff).toBe(false);
    await advanceTo(3_500);
    expect(deadline.passed).toBe(true);
    expect(deadline.cutOff).toBe(true);
  });

  it("does not count the time the call waits for its turn among the client's own requests while the queue moves", async () => {
    using deadline = new AcquireDeadline({ clock: systemClock, waitMs: 1_000, graceMs: 500, queueMovedAt });
    await advanceTo(300);
    deadline.pause();
    await advanceTo(5_000); // far past where the cut-off would have fallen
    expect(deadline.cutOff).toBe(false);
    expect(deadline.passed).toBe(false);
    deadline.resume();
    expect(deadline.elapsed).toBeCloseTo(300, 0);
    await advanceTo(5_700);
    expect(deadline.passed).toBe(false);
    await advanceTo(5_701);
    expect(deadline.passed).toBe(true);
    await advanceTo(6_199);
    expect(deadline.cutOff).toBe(false);
    await advanceTo(6_200);
    expect(deadline.cutOff).toBe(true);
  });

  it('counts a wait for a turn from the last time the queue moved, and cuts off with a reason that says so', async () => {
    let movedAt = 0;
    using deadline = new AcquireDeadline({ clock: systemClock, waitMs: 1_000, graceMs: 500, queueMovedAt: () => movedAt });
    await advanceTo(300);
    deadline.pause();
    await advanceTo(700);
    movedAt = 700; // the queue moved; the call still waits
    await advanceTo(1_899);
    expect(deadline.cutOff).toBe(false);
    await advanceTo(1_900); // 300 ms before the wait and 1 200 ms since the queue last moved: 1 500 ms, the cut-off
    expect(deadline.cutOff).toBe(true);
    expect((deadline.requestSignal.reason as DOMException).name).toBe('TimeoutError');
    expect((deadline.requestSignal.reason as DOMException).message).toMatch(/^no request slot came free for 1200 ms/);
  });

  it('never cuts off a call that waits for ever', async () => {
    using deadline = new AcquireDeadline({ clock: systemClock, waitMs: Infinity, graceMs: 500, queueMovedAt });
    deadline.addHolderLease(1_000);
    await advanceTo(10_000_000);
    expect(deadline.passed).toBe(false);
    expect(deadline.cutOff).toBe(false);
  });

  it("lets requests follow the caller's signal too", () => {
    const caller = new AbortController();
    using deadline = new AcquireDeadline({ clock: systemClock, waitMs: 1_000, graceMs: 500, signal: caller.signal, queueMovedAt });
    caller.abort(new Error('caller gave up'));
    expect(deadline.requestSignal.aborted).toBe(true);
    expect(deadline.cutOff).toBe(false);
  });

  it("leaves the caller's signal once disposed: a long-lived signal collects no listener per call", () => {
    const caller = new AbortController();
    const deadline = new AcquireDeadline({ clock: systemClock, waitMs: 1_000, graceMs: 500, signal: caller.signal, queueMovedAt });
    deadline[Symbol.dispose]();
    caller.abort(new Error('caller gave up'));
    expect(deadline.requestSignal.aborted).toBe(false);
  });
});
