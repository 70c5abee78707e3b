/**
 * LockPollers: one polling loop per lock for all waiters of a client. Fake
 * timers drive setTimeout and performance.now() (so `systemClock` moves with
 * them); the read is a recording function, since only the scheduling is
 * under test here (integration/acquire/ reads DynamoDB Local).
 */
import { describe, expect, it, jest } from '@jest/globals';
import {
  FASTEST_POLL,
  LockPollers,
  PASSED_OVER_SPEEDUP,
  POLL_JITTER,
  jitteredPollDelay,
  nextPollDue,
  type PollOutcome,
} from '../../src/acquire/lock-poller.js';
import { systemClock } from '../../src/base/clock.js';
import type { LockKey } from '../../src/base/lock-key.js';
import type { LockObservation } from '../../src/dynamodb/read-lock.js';
import { useFakeTime } from '../../test-kit/jest/fake-time.js';

interface ReadCall {
  readonly key: LockKey;
  readonly signal: AbortSignal;
  readonly at: number;
  answer(observation: LockObservation | undefined): void;
  fail(error: unknown): void;
}

/** A read that records each call and answers only when the test says so (or at once with `autoAnswer`). */
function recordingRead(autoAnswer?: (key: LockKey) => LockObservation | undefined) {
  const calls: ReadCall[] = [];
  const read = (key: LockKey, signal: AbortSignal): Promise<LockObservation | undefined> =>
    new Promise((resolve, reject) => {
      calls.push({ key, signal, at: performance.now() - at(0), answer: resolve, fail: reject });
      if (autoAnswer !== undefined) resolve(autoAnswer(key));
    });
  return { calls, read };
}

const observationOf = (rvn: string, ownerName = 'holder', isReleased = false): LockObservation => ({
  record: {
    partitionKey: 'k',
    ownerName,
    leaseDurationMs: 1_000,
    recordVersionNumber: rvn,
    isReleased,
    data: undefined,
    additionalAttributes: {},
  },
  observedAt: performance.now(),
});

const { at, advanceTo } = useFakeTime();

const key: LockKey = { partitionKey: 'k' };
const otherKey: LockKey = { partitionKey: 'k', sortKey: 's' };

describe('jitteredPollDelay', () => {
  it('is never later than the refresh period and never earlier than (1 − jitter) of it', () => {
    expect(jitteredPollDelay(1_000, () => 0)).toBe(1_000);
    expect(jitteredPollDelay(1_000, () => 0.5)).toBe(1_000 * (1 - POLL_JITTER / 2));
    expect(jitteredPollDelay(1_000, () => 0.999999)).toBeGreaterThan(1_000 * (1 - POLL_JITTER));
    expect(POLL_JITTER).toBe(0.2);
  });

  it('is a tenth of the period shorter for each hand-over the waiter lost, down to 40 % of it', () => {
    expect(jitteredPollDelay(1_000, () => 0, 3)).toBeCloseTo(1_000 * (1 - 3 * PASSED_OVER_SPEEDUP));
    expect(jitteredPollDelay(1_000, () => 0.5, 2)).toBeCloseTo(1_000 * (1 - POLL_JITTER / 2) * (1 - 2 * PASSED_OVER_SPEEDUP));
    expect(jitteredPollDelay(1_000, () => 0, 50)).toBeCloseTo(1_000 * FASTEST_POLL);
    expect([PASSED_OVER_SPEEDUP, FASTEST_POLL]).toEqual([0.1, 0.4]);
  });
});

describe('LockPollers', () => {
  it('serves every waiter of one lock with one read per tick', async () => {
    const { calls, read } = recordingRead(() => observationOf('rvn-1'));
    const pollers = new LockPollers({ read, clock: systemClock, random: () => 0 });
    const a = pollers.subscribe(key, 100);
    const b = pollers.subscribe(key, 100);
    const c = pollers.subscribe(key, 100);
    const outcomes = Promise.all([a, b, c].map((s) => s.next(Infinity)));

    await advanceTo(99);
    expect(calls).toHaveLength(0);
    await advanceTo(100);
    const [first, second, third] = await outcomes;

    expect(calls.map((call) => call.at)).toEqual([100]);
    expect(first).toMatchObject({ kind: 'read', observation: { record: { recordVersionNumber: 'rvn-1' } } });
    expect(second).toBe(first);
    expect(third).toBe(first);
    expect(pollers.size).toBe(1);

    await advanceTo(300);
    expect(calls.map((call) => call.at)).toEqual([100, 200, 300]);
    for (const s of [a, b, c]) s.dispose();
  });

  it('runs one loop per lock: a sort key makes another lock', async () => {
    const { calls, read } = recordingRead(() => undefined);
    const pollers = new LockPollers({ read, clock: systemClock, random: () => 0 });
    const a = pollers.subscribe(key, 100);
    const b = pollers.subscribe(otherKey, 100);
    await advanceTo(100);
    expect(calls.map((call) => call.key)).toEqual([key, otherKey]);
    expect(pollers.size).toBe(2);
    a.dispose();
    b.dispose();
    expect(pollers.size).toBe(0);
  });

  it('keeps polling while one waiter stays, and stops when the last one leaves', async () => {
    const { calls, read } = recordingRead(() => undefined);
    const pollers = new LockPollers({ read, clock: systemClock, random: () => 0 });
    const a = pollers.subscribe(key, 100);
    const b = pollers.subscribe(key, 100);
    await advanceTo(100);
    a.dispose();
    a.dispose(); // idempotent: b still counts
    await advanceTo(200);
    expect(calls).toHaveLength(2);

    b.dispose();
    expect(pollers.size).toBe(0);
    await advanceTo(1_000);
    expect(calls).toHaveLength(2);
  });

  it('aborts the read in flight when the last waiter leaves, and delivers nothing from it', async () => {
    const { calls, read } = recordingRead();
    const pollers = new LockPollers({ read, clock: systemClock, random: () => 0 });
    const a = pollers.subscribe(key, 100);
    await advanceTo(100);
    expect(calls).toHaveLength(1);
    const inFlight = calls[0]!;
    expect(inFlight.signal.aborted).toBe(false);

    a.dispose();
    expect(inFlight.signal.aborted).toBe(true);
    inFlight.answer(observationOf('late'));
    await advanceTo(500);
    expect(calls).toHaveLength(1);

    // A newcomer starts a fresh loop, which the old read does not disturb.
    const b = pollers.subscribe(key, 100);
    await advanceTo(600);
    expect(calls).toHaveLength(2);
    expect(calls[1]!.signal.aborted).toBe(false);
    b.dispose();
  });

  it('waits for a read in flight, then polls a period after it returned, skipping the polls the read outlasted', async () => {
    const { calls, read } = recordingRead();
    const pollers = new LockPollers({ read, clock: systemClock, random: () => 0 });
    const a = pollers.subscribe(key, 100);
    await advanceTo(100);
    await advanceTo(450); // a slow read: no second read meanwhile
    expect(calls).toHaveLength(1);
    calls[0]!.answer(undefined);
    await advanceTo(549);
    expect(calls).toHaveLength(1);
    await advanceTo(550);
    expect(calls).toHaveLength(2);
    // A read of 30 ms does not move the poll after it.
    await advanceTo(580);
    calls[1]!.answer(undefined);
    await advanceTo(650);
    expect(calls.map((call) => call.at)).toEqual([100, 550, 650]);
    a.dispose();
  });

  it('polls at the shortest refresh period among its waiters', async () => {
    const { calls, read } = recordingRead(() => undefined);
    const pollers = new LockPollers({ read, clock: systemClock, random: () => 0 });
    const slow = pollers.subscribe(key, 1_000);
    await advanceTo(300);
    const fast = pollers.subscribe(key, 100);
    await advanceTo(400);
    expect(calls.map((call) => call.at)).toEqual([400]);
    await advanceTo(500);
    expect(calls.map((call) => call.at)).toEqual([400, 500]);

    // The poll already scheduled stays; the ones after it follow the slow waiter again.
    fast.dispose();
    await advanceTo(1_600);
    expect(calls.map((call) => call.at)).toEqual([400, 500, 600, 1_600]);
    slow.dispose();
  });

  it('draws every poll between 80 % and 100 % of the refresh period after the one before, so that no phase locks in', async () => {
    const randoms = [0.5, 1, 0];
    const { calls, read } = recordingRead(() => undefined);
    const pollers = new LockPollers({ read, clock: systemClock, random: () => randoms.shift() ?? 0 });
    const a = pollers.subscribe(key, 1_000);
    await advanceTo(3_000);
    // 900 (0.5), then 800 later (1), then 1000 later (0): waiters of different processes do not keep their order.
    expect(calls.map((call) => call.at)).toEqual([900, 1_700, 2_700]);
    a.dispose();
  });

  it('polls sooner after each read that finds a new owner, not after a heartbeat, a release or a missing item', async () => {
    const answers = [
      observationOf('r1', 'a'),
      observationOf('r2', 'a'), // a heartbeat: same owner
      observationOf('r3', 'b'), // handed over: 1
      undefined, // no item
      observationOf('r4', 'b', true), // released
      observationOf('r5', 'c'), // handed over: 2
      observationOf('r6', 'c'),
    ];
    const { calls, read } = recordingRead(() => answers.shift());
    const pollers = new LockPollers({ read, clock: systemClock, random: () => 0 });
    const a = pollers.subscribe(key, 1_000);
    await advanceTo(6_000);
    // 1 000 apart until the read at 3 000 finds b, then 900 apart; 800 after the read at 5 700 finds c.
    expect(calls.map((call) => call.at)).toEqual([1_000, 2_000, 3_000, 3_900, 4_800, 5_700]);
    await advanceTo(6_500);
    expect(calls.at(-1)?.at).toBe(6_500);
    a.dispose();
  });

  it('speeds up for the waiter passed over most, and a newcomer starts from none', async () => {
    const owners = ['a', 'b', 'c', 'c', 'c', 'c'];
    const { calls, read } = recordingRead(() => observationOf('r', owners.shift() ?? 'c'));
    const pollers = new LockPollers({ read, clock: systemClock, random: () => 0 });
    const early = pollers.subscribe(key, 1_000);
    await advanceTo(3_000); // reads at 1 000 (a), 2 000 (b), 2 900 (c): two hand-overs
    const late = pollers.subscribe(key, 1_000);
    early.dispose();
    await advanceTo(6_000);
    // With the early waiter gone, the newcomer, passed over by none, polls a full period apart again.
    expect(calls.map((call) => call.at)).toEqual([1_000, 2_000, 2_900, 3_700, 4_700, 5_700]);
    late.dispose();
  });

  it('leaves no waiter polling every millisecond after one with refreshPeriod 0 has left', async () => {
    expect(nextPollDue(10, 0, 15)).toBe(15);
    const { calls, read } = recordingRead(() => undefined);
    const pollers = new LockPollers({ read, clock: systemClock, random: () => 0 });
    const eager = pollers.subscribe(key, 0);
    const patient = pollers.subscribe(key, 1_000);
    await advanceTo(5);
    eager.dispose();
    const before = calls.length;
    await advanceTo(3_005);
    patient.dispose();
    expect(calls.length - before).toBeLessThanOrEqual(4);
  });

  it('polls first when the subscriber says, without jitter, and jittered after that', async () => {
    const { calls, read } = recordingRead(() => undefined);
    const pollers = new LockPollers({ read, clock: systemClock, random: () => 1 });
    const a = pollers.subscribe(key, 1_000, 250);
    await advanceTo(1_300);
    expect(calls.map((call) => call.at)).toEqual([250, 1_050]);
    a.dispose();
  });

  it('next: resolves undefined at `until` when no poll came first, and keeps a poll that came meanwhile', async () => {
    const { read } = recordingRead(() => observationOf('rvn-1'));
    const pollers = new LockPollers({ read, clock: systemClock, random: () => 0 });
    const a = pollers.subscribe(key, 100);

    const early = a.next(at(50));
    await advanceTo(49);
    let settled: PollOutcome | undefined | 'pending' = 'pending';
    void early.then((value) => (settled = value));
    await jest.advanceTimersByTimeAsync(0);
    expect(settled).toBe('pending');
    await advanceTo(50);
    expect(await early).toBeUndefined();

    // The poll at 100 arrives while nobody waits in next(); the next call gets it at once.
    await advanceTo(150);
    expect(await a.next(Infinity)).toMatchObject({ kind: 'read', at: at(100) });
    a.dispose();
  });

  it('next: keeps only the newest outcome a waiter has not taken', async () => {
    let n = 0;
    const { read } = recordingRead(() => observationOf(`rvn-${++n}`));
    const pollers = new LockPollers({ read, clock: systemClock, random: () => 0 });
    const a = pollers.subscribe(key, 100);
    await advanceTo(350);
    const outcome = await a.next(Infinity);
    expect(outcome).toMatchObject({ kind: 'read', observation: { record: { recordVersionNumber: 'rvn-3' } } });
    a.dispose();
  });

  it('next: rejects with the signal’s reason when it aborts, and the loop goes on for the others', async () => {
    const { calls, read } = recordingRead(() => undefined);
    const pollers = new LockPollers({ read, clock: systemClock, random: () => 0 });
    const a = pollers.subscribe(key, 100);
    const b = pollers.subscribe(key, 100);
    const controller = new AbortController();
    const reason = new Error('gave up');
    const waiting = a.next(Infinity, controller.signal);
    controller.abort(reason);
    await expect(waiting).rejects.toBe(reason);
    await expect(a.next(Infinity, AbortSignal.abort(reason))).rejects.toBe(reason);
    a.dispose();

    await advanceTo(100);
    expect(await b.next(Infinity)).toMatchObject({ kind: 'read', observation: undefined });
    expect(calls).toHaveLength(1);
    b.dispose();
  });

  it('delivers a failed read as an error outcome and keeps polling', async () => {
    const failure = new Error('throttled');
    const { calls, read } = recordingRead();
    const pollers = new LockPollers({ read, clock: systemClock, random: () => 0 });
    const a = pollers.subscribe(key, 100);
    await advanceTo(100);
    calls[0]!.fail(failure);
    expect(await a.next(Infinity)).toEqual({ kind: 'error', error: failure });
    await advanceTo(200);
    expect(calls).toHaveLength(2);
    a.dispose();
  });
});
