/**
 * AcquireDeadline: an acquisition waits `additionalTimeToWaitForLock` plus
 * the first holder's lease, and its requests are cut off a grace past that.
 * Fake timers drive setTimeout and performance.now(), so `systemClock`
 * moves with them.
 */
import { describe, expect, it } from '@jest/globals';
import { AcquireDeadline } from '../../src/acquire/acquire-deadline.js';
import { systemClock } from '../../src/base/clock.js';
import { useFakeTime } from '../../test-kit/jest/fake-time.js';

const { advanceTo } = useFakeTime();

describe('AcquireDeadline', () => {
  it('passes after the wait, and cuts requests off a grace later', async () => {
    using deadline = new AcquireDeadline({ clock: systemClock, waitMs: 1_000, graceMs: 500 });
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
    using deadline = new AcquireDeadline({ clock: systemClock, waitMs: 1_000, graceMs: 500 });
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

  it("counts the holder's lease from when the holder was first seen, so that the call never gives up before its takeover is due", async () => {
    using deadline = new AcquireDeadline({ clock: systemClock, waitMs: 0, graceMs: 500 });
    // The first read's answer came 30 ms into the call: the holder's RVN is timed from then.
    await advanceTo(30);
    deadline.addHolderLease(1_000);
    await advanceTo(1_030);
    expect(deadline.passed).toBe(false);
    await advanceTo(1_031);
    expect(deadline.passed).toBe(true);
  });

  it('does not count the time the call waits to be admitted by the gate against its wait', async () => {
    using deadline = new AcquireDeadline({ clock: systemClock, waitMs: 1_000, graceMs: 500 });
    await advanceTo(300);
    deadline.pause();
    await advanceTo(1_200);
    expect(deadline.passed).toBe(false);
    deadline.resume();
    expect(deadline.elapsed).toBeCloseTo(300, 0);
    await advanceTo(1_400);
    expect(deadline.passed).toBe(false);
    expect(deadline.remaining).toBeCloseTo(500, 0);
  });

  it('cuts off at its own time however long it waited for a turn, with a reason that says no slot came free', async () => {
    using deadline = new AcquireDeadline({ clock: systemClock, waitMs: 1_000, graceMs: 500 });
    await advanceTo(300);
    deadline.pause();
    await advanceTo(1_499);
    expect(deadline.cutOff).toBe(false);
    await advanceTo(1_500); // the wait and the grace from the call's start, queue or no queue
    expect(deadline.cutOff).toBe(true);
    expect((deadline.requestSignal.reason as DOMException).name).toBe('TimeoutError');
    expect((deadline.requestSignal.reason as DOMException).message).toMatch(/^no request slot came free for 1200 ms/);
  });

  it('never cuts off a call that waits for ever', async () => {
    using deadline = new AcquireDeadline({ clock: systemClock, waitMs: Infinity, graceMs: 500 });
    deadline.addHolderLease(1_000);
    await advanceTo(10_000_000);
    expect(deadline.passed).toBe(false);
    expect(deadline.cutOff).toBe(false);
  });

  it("lets requests follow the caller's signal too", () => {
    const caller = new AbortController();
    using deadline = new AcquireDeadline({ clock: systemClock, waitMs: 1_000, graceMs: 500, signal: caller.signal });
    caller.abort(new Error('caller gave up'));
    expect(deadline.requestSignal.aborted).toBe(true);
    expect(deadline.cutOff).toBe(false);
  });

  it("leaves the caller's signal once disposed: a long-lived signal collects no listener per call", () => {
    const caller = new AbortController();
    const deadline = new AcquireDeadline({ clock: systemClock, waitMs: 1_000, graceMs: 500, signal: caller.signal });
    deadline[Symbol.dispose]();
    caller.abort(new Error('caller gave up'));
    expect(deadline.requestSignal.aborted).toBe(false);
  });
  describe('requests sent one at a time', () => {
    const unanswered = (signal: AbortSignal): Promise<never> =>
      new Promise((_, reject) => signal.addEventListener('abort', () => reject(new Error('aborted by the SDK')), { once: true }));

    it('abandons a request unanswered for its bound with a TimeoutError, and gives the next one a fresh signal', async () => {
      using deadline = new AcquireDeadline({ clock: systemClock, waitMs: 10_000, graceMs: 5_000, oneRequestAtATime: true });
      let first: AbortSignal | undefined;
      const abandoned = deadline.withinBound(300, (signal) => {
        first = signal;
        return unanswered(signal);
      });
      const settled = abandoned.catch((error: unknown) => error);
      await advanceTo(299);
      expect(first?.aborted).toBe(false);
      await advanceTo(300);
      const error = (await settled) as DOMException;
      expect(error.name).toBe('TimeoutError');
      expect(error.message).toBe('no answer within 300 ms: the request was abandoned');
      expect(deadline.cutOff).toBe(false);
      const next = await deadline.withinBound(300, async (signal) => signal);
      expect(next).not.toBe(first);
      expect(next.aborted).toBe(false);
      expect(deadline.requestSignal).toBe(next);
    });

    it("aborts the request in flight with the caller's signal, and its error is the SDK's, not a bound's", async () => {
      const caller = new AbortController();
      using deadline = new AcquireDeadline({
        clock: systemClock,
        waitMs: 10_000,
        graceMs: 5_000,
        signal: caller.signal,
        oneRequestAtATime: true,
      });
      const settled = deadline.withinBound(300, unanswered).catch((error: unknown) => error);
      caller.abort(new Error('caller gave up'));
      expect(((await settled) as Error).message).toBe('aborted by the SDK');
      await advanceTo(1_000);
      expect(deadline.requestSignal.aborted).toBe(true);
    });

    it('leaves no bound timer behind once the request is answered', async () => {
      using deadline = new AcquireDeadline({ clock: systemClock, waitMs: 10_000, graceMs: 5_000, oneRequestAtATime: true });
      let seen: AbortSignal | undefined;
      await deadline.withinBound(300, async (signal) => (seen = signal));
      await advanceTo(1_000);
      expect(seen?.aborted).toBe(false);
      expect(deadline.requestSignal).toBe(seen);
    });
  });
});
