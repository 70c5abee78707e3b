/**
 * LockKeeper's scheduling, with fake timers (they drive both setTimeout and
 * performance.now, so the monotonic clock moves with them): when heartbeats
 * are due, how transient failures are retried within the safe time, when a
 * lock is given up, and the session monitor.
 */
import { afterEach, beforeEach, describe, expect, it, jest } from '@jest/globals';
import { systemClock } from '../../src/base/clock.js';
import { TypedEvents } from '../../src/base/events.js';
import type { HeartbeatResult, HeartbeatWriter } from '../../src/heartbeat/heartbeat-writer.js';
import { HeldLock } from '../../src/hold/held-lock.js';
import { LeaseEnd } from '../../src/hold/lease-end.js';
import type { SessionMonitor } from '../../src/hold/lock-state.js';
import type { HoldEvents } from '../../src/heartbeat/hold-events.js';
import { LockKeeper } from '../../src/heartbeat/lock-keeper.js';

const PERIOD = 1_000;
const LEASE = 4_000;
const MARGIN = 400;

const throttled = (): Error => Object.assign(new Error('slow down'), { name: 'ThrottlingException', $metadata: { httpStatusCode: 400 } });
const refused = (): Error =>
  Object.assign(new Error('condition failed'), { name: 'ConditionalCheckFailedException', $metadata: { httpStatusCode: 400 } });

/** What the keeper does, seen from outside: the writer's calls, the events it tells, the locks it ends. */
interface Calls {
  heartbeat: jest.Mock<HeartbeatWriter['write']>;
  heartbeatBatch: jest.Mock<HeartbeatWriter['writeBatch']>;
  heartbeatFailed: jest.Mock<(held: HeldLock, error: unknown, willRetry: boolean) => void>;
  heartbeatConfirmed: jest.Mock<(held: HeldLock, lagMs: number) => void>;
  endangered: jest.Mock<(held: HeldLock) => void>;
  /** Ended because no heartbeat was confirmed within the safe time. */
  expire: jest.Mock<(held: HeldLock) => void>;
  /** Ended because too little safe time was left for a heartbeat. */
  giveUp: jest.Mock<(held: HeldLock, reason: string) => void>;
}

interface Harness {
  keeper: LockKeeper;
  held: HeldLock;
  hooks: Calls;
  /** What the next heartbeat attempts do, in order; 'ok' confirms as the writer does. */
  outcomes: Array<'ok' | Error>;
}

/** Moves the lock's last confirmed write, as a heartbeat confirmed at `sentAt` would. */
function confirmAt(held: HeldLock, sentAt: number, leaseDurationMs = held.leaseDurationMs): void {
  held.confirmWrite({ recordVersionNumber: held.recordVersionNumber, leaseDurationMs, sentAt, sentAtWall: undefined });
}

const CONFIRMED: HeartbeatResult = { outcome: 'confirmed' };

/** A keeper with a fake writer; `keeper` is set before any lock is tracked. */
function keeperWith(options: {
  batching: boolean;
  backgroundHeartbeats?: boolean;
  random?: number;
  concurrency?: number;
  write?: HeartbeatWriter['write'];
  writeBatch?: HeartbeatWriter['writeBatch'];
}): {
  keeper: LockKeeper;
  hooks: Calls;
  newHeldLock: (partitionKey: string, sessionMonitor?: SessionMonitor, leaseEnd?: LeaseEnd) => HeldLock;
} {
  const events = new TypedEvents<HoldEvents>((error) => {
    throw error;
  });
  const hooks: Calls = {
    heartbeat: jest.fn<HeartbeatWriter['write']>(options.write ?? (async () => CONFIRMED)),
    heartbeatBatch: jest.fn<HeartbeatWriter['writeBatch']>(options.writeBatch ?? (async () => [])),
    heartbeatFailed: jest.fn(),
    heartbeatConfirmed: jest.fn(),
    endangered: jest.fn(),
    expire: jest.fn(),
    giveUp: jest.fn(),
  };
  events.on('heartbeatError', ({ held, error, willRetry }) => hooks.heartbeatFailed(held, error, willRetry));
  events.on('heartbeat', ({ held, lagMs }) => hooks.heartbeatConfirmed(held, lagMs));
  events.on('endangered', ({ held }) => hooks.endangered(held));
  const writer = { write: hooks.heartbeat, writeBatch: hooks.heartbeatBatch, batching: options.batching } as unknown as HeartbeatWriter;
  const keeper = new LockKeeper({
    writer,
    events,
    clock: systemClock,
    heartbeatPeriod: PERIOD,
    heartbeatConcurrency: options.concurrency ?? 4,
    heartbeatBatchSize: options.batching ? 25 : 1,
    backgroundHeartbeats: options.backgroundHeartbeats ?? true,
    random: () => options.random ?? 0,
  });
  /** A lock just acquired (its last confirmed write is now), with the test's lease and margin. */
  const newHeldLock = (partitionKey: string, sessionMonitor?: SessionMonitor, leaseEnd?: LeaseEnd): HeldLock =>
    new HeldLock({
      key: { partitionKey },
      ownerName: 'me',
      recordVersionNumber: 'rvn-0',
      leaseDurationMs: LEASE,
      lookupTime: performance.now(),
      lookupWallTime: undefined,
      data: undefined,
      additionalAttributes: {},
      deleteLockOnRelease: true,
      clock: systemClock,
      marginFor: () => MARGIN,
      sessionMonitor,
      leaseEnd,
      // As the client's registry does: an ended lock is no longer kept.
      onEnd: (held) => {
        keeper.untrack(held);
        const message = held.endReason?.message ?? '';
        if (/no heartbeat was confirmed/.test(message)) hooks.expire(held);
        if (/could not be sent in time/.test(message)) hooks.giveUp(held, message);
      },
    });
  return { keeper, hooks, newHeldLock };
}

function harness(options: { random?: number; backgroundHeartbeats?: boolean; sessionSafeTime?: number; leaseEnd?: LeaseEnd } = {}): Harness {
  const outcomes: Array<'ok' | Error> = [];
  const { keeper, hooks, newHeldLock } = keeperWith({
    batching: false,
    backgroundHeartbeats: options.backgroundHeartbeats,
    random: options.random,
    write: async (held, change) => {
      const outcome = outcomes.shift() ?? 'ok';
      if (outcome !== 'ok') return { outcome: 'failed', error: outcome };
      confirmAt(held, performance.now(), change.leaseDurationMs);
      return CONFIRMED;
    },
  });
  const monitor = options.sessionSafeTime === undefined ? undefined : { safeTimeWithoutHeartbeat: options.sessionSafeTime, callback: jest.fn() };
  const held = newHeldLock('job', monitor, options.leaseEnd);
  return { keeper, held, hooks, outcomes };
}

beforeEach(() => {
  jest.useFakeTimers();
});

afterEach(() => {
  jest.useRealTimers();
});

describe('when heartbeats are due', () => {
  it('one period after the last confirmed write, and again after each confirmation', async () => {
    const { keeper, held, hooks } = harness({ random: 0 });
    keeper.track(held);
    await jest.advanceTimersByTimeAsync(PERIOD - 1);
    expect(hooks.heartbeat).not.toHaveBeenCalled();
    await jest.advanceTimersByTimeAsync(1);
    expect(hooks.heartbeat).toHaveBeenCalledTimes(1);
    await jest.advanceTimersByTimeAsync(PERIOD);
    expect(hooks.heartbeat).toHaveBeenCalledTimes(2);
    expect(hooks.heartbeatConfirmed).toHaveBeenCalledTimes(2);
    expect(hooks.expire).not.toHaveBeenCalled();
    keeper.close();
  });

  it('up to a tenth of a period early with jitter, never late', async () => {
    const { keeper, held, hooks } = harness({ random: 0.999 });
    keeper.track(held);
    await jest.advanceTimersByTimeAsync(PERIOD * 0.9);
    expect(hooks.heartbeat).toHaveBeenCalledTimes(1);
    keeper.close();
  });

  it('jitters only the first heartbeat: later ones follow a full period after each confirmation', async () => {
    const { keeper, held, hooks } = harness({ random: 0.5 });
    keeper.track(held);
    await jest.advanceTimersByTimeAsync(PERIOD * 0.95);
    expect(hooks.heartbeat).toHaveBeenCalledTimes(1);
    await jest.advanceTimersByTimeAsync(PERIOD - 1);
    expect(hooks.heartbeat).toHaveBeenCalledTimes(1);
    await jest.advanceTimersByTimeAsync(1);
    expect(hooks.heartbeat).toHaveBeenCalledTimes(2);
    keeper.close();
  });

  it('reports how late a heartbeat started', async () => {
    const { keeper, held, hooks } = harness({ random: 0 });
    keeper.track(held);
    await jest.advanceTimersByTimeAsync(PERIOD);
    const [, lagMs] = hooks.heartbeatConfirmed.mock.calls[0] as [HeldLock, number];
    expect(lagMs).toBeGreaterThanOrEqual(0);
    expect(lagMs).toBeLessThan(5);
    keeper.close();
  });

  it('schedules no heartbeat without background heartbeats, but still the expiry', async () => {
    const { keeper, held, hooks } = harness({ backgroundHeartbeats: false });
    keeper.track(held);
    await jest.advanceTimersByTimeAsync(LEASE - MARGIN - 1);
    expect(hooks.heartbeat).not.toHaveBeenCalled();
    expect(hooks.expire).not.toHaveBeenCalled();
    await jest.advanceTimersByTimeAsync(1);
    expect(hooks.expire).toHaveBeenCalledTimes(1);
    keeper.close();
  });
});

describe('failures', () => {
  it('retries a transient failure with backoff and reports each failed attempt', async () => {
    const { keeper, held, hooks, outcomes } = harness();
    outcomes.push(throttled(), throttled(), 'ok');
    keeper.track(held);
    // Backoff starts at 100 ms, doubles, and is randomized up to twice that: both retries fit in 600 ms.
    await jest.advanceTimersByTimeAsync(PERIOD + 600);
    expect(hooks.heartbeat).toHaveBeenCalledTimes(3);
    expect(hooks.heartbeatFailed.mock.calls.map(([, , willRetry]) => willRetry)).toEqual([true, true]);
    expect(hooks.heartbeatConfirmed).toHaveBeenCalledTimes(1);
    expect(held.state).toBe('held');
    keeper.close();
  });

  it('waits a backoff before the first retry, not retrying at once', async () => {
    const { keeper, held, hooks, outcomes } = harness({ random: 0 });
    outcomes.push(throttled(), 'ok');
    keeper.track(held);
    await jest.advanceTimersByTimeAsync(PERIOD);
    expect(hooks.heartbeat).toHaveBeenCalledTimes(1);
    await jest.advanceTimersByTimeAsync(99); // the first backoff is 100 ms (randomized up to 200; here 0)
    expect(hooks.heartbeat).toHaveBeenCalledTimes(1);
    await jest.advanceTimersByTimeAsync(1);
    expect(hooks.heartbeat).toHaveBeenCalledTimes(2);
    expect(hooks.heartbeatConfirmed).toHaveBeenCalledTimes(1);
    keeper.close();
  });

  it('does not retry a refused heartbeat', async () => {
    const { keeper, held, hooks, outcomes } = harness();
    outcomes.push(refused());
    keeper.track(held);
    await jest.advanceTimersByTimeAsync(PERIOD + 200);
    expect(hooks.heartbeat).toHaveBeenCalledTimes(1);
    expect(hooks.heartbeatFailed.mock.calls.map(([, , willRetry]) => willRetry)).toEqual([false]);
    keeper.close();
  });

  it('gives the lock up at lease minus margin when no heartbeat is confirmed, not before', async () => {
    const { keeper, held, hooks, outcomes } = harness();
    for (let i = 0; i < 100; i++) outcomes.push(throttled());
    keeper.track(held);
    await jest.advanceTimersByTimeAsync(LEASE - MARGIN - 1);
    expect(hooks.expire).not.toHaveBeenCalled();
    expect(hooks.heartbeat.mock.calls.length).toBeGreaterThan(2);
    await jest.advanceTimersByTimeAsync(1);
    expect(hooks.expire).toHaveBeenCalledTimes(1);
    const attempts = hooks.heartbeat.mock.calls.length;
    await jest.advanceTimersByTimeAsync(5 * PERIOD);
    expect(hooks.heartbeat).toHaveBeenCalledTimes(attempts); // nothing after the lock was given up
    keeper.close();
  });

  it('bounds an attempt by the safe time less the room a retry needs, so a request that never returns leaves time for one', async () => {
    const stuck = harness({ random: 0 });
    stuck.hooks.heartbeat.mockImplementationOnce(() => new Promise(() => undefined));
    stuck.keeper.track(stuck.held);
    await jest.advanceTimersByTimeAsync(PERIOD);
    const [, , firstDeadline] = stuck.hooks.heartbeat.mock.calls[0] as [HeldLock, unknown, AbortSignal];
    // 2.6 periods of safe time are left, a third of them for a retry; shared deadlines end up to a twentieth early.
    const BOUND = ((LEASE - MARGIN - PERIOD) * 2) / 3;
    await jest.advanceTimersByTimeAsync(BOUND * 0.95 - 1);
    expect(firstDeadline.aborted).toBe(false);
    await jest.advanceTimersByTimeAsync(BOUND * 0.05 + 1);
    expect(firstDeadline.aborted).toBe(true);
    // The attempt's abort surfaces as the hook's rejection in the client; here it never settles,
    // so the run holds its slot, and the expiry (not a second heartbeat) decides.
    await jest.advanceTimersByTimeAsync(LEASE);
    expect(stuck.hooks.expire).toHaveBeenCalledTimes(1);
    stuck.keeper.close();
  });

  it('waits for an answer later than a period while the safe time still allows it, rather than cutting it off', async () => {
    const { keeper, held, hooks } = harness({ random: 0 });
    const SLOW_REPLY = 1.5 * PERIOD; // the safe time left when the heartbeat is due is 2.6 periods
    hooks.heartbeat.mockImplementationOnce(
      (lock, _change, until) =>
        new Promise<HeartbeatResult>((resolve) => {
          const answer = setTimeout(() => {
            confirmAt(lock, performance.now());
            resolve(CONFIRMED);
          }, SLOW_REPLY);
          until.addEventListener('abort', () => {
            clearTimeout(answer);
            resolve({ outcome: 'failed', error: until.reason });
          });
        }),
    );
    keeper.track(held);
    await jest.advanceTimersByTimeAsync(PERIOD + SLOW_REPLY);
    expect(hooks.heartbeatFailed).not.toHaveBeenCalled();
    expect(hooks.heartbeatConfirmed).toHaveBeenCalledTimes(1);
    expect(held.state).toBe('held');
    keeper.close();
  });

  it('never gives an attempt more than what is left of the safe time', async () => {
    const late = harness({ random: 0 });
    late.hooks.heartbeat.mockImplementation(() => new Promise(() => undefined));
    // Pretend the last confirmed write was long ago: less safe time is left when the heartbeat starts than a retry would
    // need, so the attempt gets all of it.
    confirmAt(late.held, performance.now() - (LEASE - MARGIN - 150));
    late.keeper.track(late.held);
    await jest.advanceTimersByTimeAsync(1);
    const [, , attemptDeadline] = late.hooks.heartbeat.mock.calls[0] as [HeldLock, unknown, AbortSignal];
    await jest.advanceTimersByTimeAsync(146);
    expect(attemptDeadline.aborted).toBe(false);
    await jest.advanceTimersByTimeAsync(3);
    expect(attemptDeadline.aborted).toBe(true);
    late.keeper.close();
  });

  it('gives a lock up instead of heartbeating it when less safe time is left than a heartbeat takes', async () => {
    const { keeper, held, hooks } = harness({ random: 0 });
    const ROUND_TRIP = 200;
    hooks.heartbeat.mockImplementation(async () => {
      await new Promise((resolve) => setTimeout(resolve, ROUND_TRIP));
      confirmAt(held, performance.now());
      return CONFIRMED;
    });
    keeper.track(held);
    await jest.advanceTimersByTimeAsync(PERIOD + ROUND_TRIP);
    expect(hooks.heartbeatConfirmed).toHaveBeenCalledTimes(1);
    // As if the scheduler had fallen far behind: the next heartbeat starts with 150 ms of safe time left.
    keeper.untrack(held);
    confirmAt(held, performance.now() - (LEASE - MARGIN - 150));
    keeper.track(held);
    await jest.advanceTimersByTimeAsync(1);
    expect(hooks.heartbeat).toHaveBeenCalledTimes(1);
    expect(hooks.giveUp).toHaveBeenCalledTimes(1);
    expect(hooks.giveUp.mock.calls[0]?.[1]).toMatch(/150 ms of safe time were left, and a heartbeat takes about 200 ms/);
    expect(hooks.expire).not.toHaveBeenCalled();
    keeper.close();
  });

  it("ends a lock bounded by its invocation as kind 'deadline' when the deadline leaves too little safe time for a heartbeat", async () => {
    const ROUND_TRIP = 200;
    // Safe until 2 300 ms: the second heartbeat, due at 2 200 ms, finds 100 ms left, less than a heartbeat takes.
    const leaseEnd = new LeaseEnd(performance.now() + 2_300 + MARGIN, 1_000, MARGIN);
    const { keeper, held, hooks } = harness({ random: 0, leaseEnd });
    hooks.heartbeat.mockImplementation(async () => {
      await new Promise((resolve) => setTimeout(resolve, ROUND_TRIP));
      confirmAt(held, performance.now());
      return CONFIRMED;
    });
    keeper.track(held);
    await jest.advanceTimersByTimeAsync(2 * PERIOD + ROUND_TRIP);
    expect(hooks.heartbeat).toHaveBeenCalledTimes(1);
    expect(held.state).toBe('lost');
    expect(held.endReason).toMatchObject({ kind: 'deadline' });
    expect(held.endReason?.message).toMatch(/could not be sent in time.*invocationDeadline|invocationDeadline.*could not be sent in time/);
    keeper.close();
  });

  it('still heartbeats with little safe time left when that is more than a heartbeat takes', async () => {
    const { keeper, held, hooks } = harness({ random: 0 });
    keeper.track(held);
    await jest.advanceTimersByTimeAsync(PERIOD);
    keeper.untrack(held);
    confirmAt(held, performance.now() - (LEASE - MARGIN - 150));
    keeper.track(held);
    await jest.advanceTimersByTimeAsync(1);
    expect(hooks.heartbeat).toHaveBeenCalledTimes(2);
    expect(hooks.giveUp).not.toHaveBeenCalled();
    expect(held.state).toBe('held');
    keeper.close();
  });

  it('a confirmed heartbeat moves the expiry', async () => {
    const { keeper, held, hooks } = harness();
    keeper.track(held);
    await jest.advanceTimersByTimeAsync(3 * LEASE);
    expect(hooks.expire).not.toHaveBeenCalled();
    expect(held.state).toBe('held');
    keeper.close();
  });

  it('a confirmed write with a shorter lease brings the expiry forward', async () => {
    const { keeper, held, hooks, outcomes } = harness({ backgroundHeartbeats: false });
    for (let i = 0; i < 100; i++) outcomes.push(throttled());
    keeper.track(held);
    await jest.advanceTimersByTimeAsync(1_000);
    outcomes.length = 0;
    await keeper.sendHeartbeat(held, { leaseDurationMs: LEASE / 2 });
    await jest.advanceTimersByTimeAsync(LEASE / 2 - MARGIN - 1);
    expect(hooks.expire).not.toHaveBeenCalled();
    await jest.advanceTimersByTimeAsync(1);
    expect(hooks.expire).toHaveBeenCalledTimes(1);
    keeper.close();
  });

  it('untrack stops every task of the lock', async () => {
    const { keeper, held, hooks } = harness({ sessionSafeTime: 2_000 });
    keeper.track(held);
    keeper.untrack(held);
    expect(jest.getTimerCount()).toBe(0);
    await jest.advanceTimersByTimeAsync(2 * LEASE);
    expect(hooks.heartbeat).not.toHaveBeenCalled();
    expect(hooks.expire).not.toHaveBeenCalled();
    expect(held.sessionMonitor?.callback).not.toHaveBeenCalled();
  });
});

describe('endangered', () => {
  it('is told once per episode of failures: a confirmed heartbeat ends the episode, a 503 kept by holdLockOnServiceUnavailable does not', async () => {
    const results: HeartbeatResult[] = [
      { outcome: 'failed', error: refused() },
      { outcome: 'kept' },
      { outcome: 'failed', error: refused() },
      CONFIRMED,
      { outcome: 'failed', error: refused() },
    ];
    const { keeper, hooks, newHeldLock } = keeperWith({
      batching: false,
      write: async (held) => {
        const result = results.shift() ?? CONFIRMED;
        if (result.outcome === 'confirmed') confirmAt(held, performance.now());
        if (result.outcome === 'kept') held.keepWithoutConfirmation();
        return result;
      },
    });
    const held = newHeldLock('job');
    keeper.track(held);
    for (let i = 0; i < 5; i++) await jest.advanceTimersByTimeAsync(PERIOD);
    expect(hooks.heartbeat.mock.calls.length).toBeGreaterThanOrEqual(5);
    expect(hooks.heartbeatFailed).toHaveBeenCalledTimes(3);
    expect(hooks.endangered).toHaveBeenCalledTimes(2);
    keeper.close();
  });
});

describe('session monitor', () => {
  it('calls back once safeTimeWithoutHeartbeat after the last confirmed write, and again after a new confirmation', async () => {
    const { keeper, held, hooks, outcomes } = harness({ sessionSafeTime: 1_500 });
    for (let i = 0; i < 100; i++) outcomes.push(throttled());
    keeper.track(held);
    const callback = held.sessionMonitor?.callback as jest.Mock;
    await jest.advanceTimersByTimeAsync(1_499);
    expect(callback).not.toHaveBeenCalled();
    await jest.advanceTimersByTimeAsync(1);
    expect(callback).toHaveBeenCalledTimes(1);
    await jest.advanceTimersByTimeAsync(500);
    expect(callback).toHaveBeenCalledTimes(1);
    // A confirmed write re-arms it.
    outcomes.length = 0;
    await keeper.sendHeartbeat(held, {});
    await jest.advanceTimersByTimeAsync(1_000);
    expect(callback).toHaveBeenCalledTimes(1);
    expect(hooks.expire).not.toHaveBeenCalled();
    keeper.close();
  });

  it('never keeps a timer per lock: a thousand locks share one timer', () => {
    const { keeper, newHeldLock } = keeperWith({ batching: false });
    for (let i = 0; i < 1_000; i++) keeper.track(newHeldLock(`job-${i}`, { safeTimeWithoutHeartbeat: 2_000, callback: undefined }));
    expect(jest.getTimerCount()).toBe(1);
    keeper.close();
    expect(jest.getTimerCount()).toBe(0);
  });
});

describe('batches', () => {
  type Outcome = 'confirmed' | 'unbatchable' | { error: unknown };
  interface BatchHarness {
    helds: HeldLock[];
    hooks: Calls;
    /** Outcome per partition key for the next batch; missing keys are confirmed. */
    next: Map<string, Outcome>;
    keeper: LockKeeper;
    /** Tracks one more lock, acquired now. */
    track: (partitionKey: string) => HeldLock;
  }

  const resultOf = (outcome: Outcome): HeartbeatResult =>
    typeof outcome === 'string' ? { outcome } : { outcome: 'failed', error: outcome.error };

  /** Several locks acquired at the same instant, so their heartbeats fall due together (no jitter). */
  function batchHarness(count: number): BatchHarness {
    const next = new Map<string, Outcome>();
    const confirm = (held: HeldLock): HeartbeatResult => {
      confirmAt(held, performance.now());
      return CONFIRMED;
    };
    const { keeper, hooks, newHeldLock } = keeperWith({
      batching: true,
      concurrency: 1,
      write: async (held) => confirm(held),
      writeBatch: async (batch) => {
        const outcomes = batch.map((held) => next.get(held.partitionKey) ?? 'confirmed');
        next.clear();
        return batch.map((held, i) => (outcomes[i] === 'confirmed' ? confirm(held) : resultOf(outcomes[i] as Outcome)));
      },
    });
    const helds = Array.from({ length: count }, (_, i) => newHeldLock(`lock-${i}`));
    for (const held of helds) keeper.track(held);
    const track = (partitionKey: string): HeldLock => {
      const held = newHeldLock(partitionKey);
      keeper.track(held);
      return held;
    };
    return { helds, hooks, next, keeper, track };
  }

  /** Moves a lock's last confirmed write back by `ms`. */
  const backdate = (held: HeldLock, ms: number): void => confirmAt(held, held.lookupTime - ms);

  /** Sorted: locks due at the same instant leave the heap in no particular order. */
  const keysOf = (helds: readonly HeldLock[]): string[] => helds.map((held) => held.partitionKey).sort();

  it('heartbeats locks due together in one batch, confirms each and schedules each a period later', async () => {
    const { helds, hooks, keeper } = batchHarness(3);
    await jest.advanceTimersByTimeAsync(PERIOD);
    expect(hooks.heartbeatBatch).toHaveBeenCalledTimes(1);
    expect(keysOf(hooks.heartbeatBatch.mock.calls[0]?.[0] ?? [])).toEqual(keysOf(helds));
    expect(hooks.heartbeat).not.toHaveBeenCalled();
    expect(hooks.heartbeatConfirmed.mock.calls.map(([held]) => held.partitionKey).sort()).toEqual(keysOf(helds));
    await jest.advanceTimersByTimeAsync(PERIOD);
    expect(hooks.heartbeatBatch).toHaveBeenCalledTimes(2);
    keeper.close();
  });

  it('bounds the batch by the shortest safe time of its locks', async () => {
    const { helds, hooks, keeper } = batchHarness(2);
    backdate(helds[1] as HeldLock, LEASE - MARGIN - PERIOD - 300); // 300 ms of safe time left when due
    let deadline: AbortSignal | undefined;
    hooks.heartbeatBatch.mockImplementationOnce(async (_, signal) => {
      deadline = signal;
      return new Promise<never>(() => undefined);
    });
    await jest.advanceTimersByTimeAsync(PERIOD);
    expect(deadline?.aborted).toBe(false);
    await jest.advanceTimersByTimeAsync(300);
    expect(deadline?.aborted).toBe(true);
    keeper.close();
  });

  it("never gives a batch a lock's last chance: a batch slow of late still leaves each lock the room a lone retry needs", async () => {
    const { helds, hooks, keeper } = batchHarness(2);
    // The first batch is answered after 900 ms: batches are slow of late.
    hooks.heartbeatBatch.mockImplementationOnce(async (batch) => {
      await new Promise((resolve) => setTimeout(resolve, 900));
      return batch.map((held) => {
        confirmAt(held, performance.now());
        return CONFIRMED;
      });
    });
    // The next one gets no answer: it fails when its attempt is cut off, as a request does.
    hooks.heartbeatBatch.mockImplementationOnce(
      async (batch, signal) =>
        new Promise((resolve) =>
          signal.addEventListener('abort', () => resolve(batch.map(() => ({ outcome: 'failed', error: signal.reason as unknown })))),
        ),
    );
    // A lone heartbeat takes 100 ms.
    hooks.heartbeat.mockImplementation(async (held) => {
      const sentAt = performance.now();
      await new Promise((resolve) => setTimeout(resolve, 100));
      confirmAt(held, sentAt);
      return CONFIRMED;
    });
    await jest.advanceTimersByTimeAsync(PERIOD + 900 + PERIOD + LEASE);
    // Each lock was then heartbeated alone, within its safe time: none was lost.
    expect(hooks.expire).not.toHaveBeenCalled();
    expect(hooks.giveUp).not.toHaveBeenCalled();
    expect(keysOf(hooks.heartbeat.mock.calls.slice(0, 2).map(([held]) => held))).toEqual(['lock-0', 'lock-1']);
    expect(helds.every((held) => held.state === 'held')).toBe(true);
    keeper.close();
  });

  it('a lock whose heartbeat failed in a batch is reported and retries alone, after a backoff', async () => {
    const { helds, hooks, next, keeper } = batchHarness(3);
    next.set('lock-1', { error: throttled() });
    await jest.advanceTimersByTimeAsync(PERIOD);
    expect(hooks.heartbeatFailed).toHaveBeenCalledTimes(1);
    const [failedLock, , willRetry] = hooks.heartbeatFailed.mock.calls[0] as [HeldLock, unknown, boolean];
    expect([failedLock.partitionKey, willRetry]).toEqual(['lock-1', true]);
    expect(hooks.heartbeat).not.toHaveBeenCalled(); // not at once
    await jest.advanceTimersByTimeAsync(200);
    expect(hooks.heartbeat.mock.calls.map(([held]) => held.partitionKey)).toEqual(['lock-1']);
    expect(helds.every((held) => held.state === 'held')).toBe(true);
    // Its lone run is over: due together with the others again, it joins their batch.
    const [first, second] = helds as [HeldLock, HeldLock];
    confirmAt(second, first.lookupTime);
    keeper.track(second);
    hooks.heartbeatBatch.mockClear();
    await jest.advanceTimersByTimeAsync(first.lookupTime + PERIOD - performance.now());
    expect(hooks.heartbeatBatch.mock.calls.map(([batch]) => keysOf(batch))).toEqual([keysOf(helds)]);
    keeper.close();
  });

  it('a refused condition in a batch is not retried', async () => {
    const { hooks, next, keeper } = batchHarness(2);
    next.set('lock-0', { error: refused() });
    await jest.advanceTimersByTimeAsync(PERIOD);
    expect(hooks.heartbeatFailed.mock.calls.map(([held, , willRetry]) => [held.partitionKey, willRetry])).toEqual([['lock-0', false]]);
    keeper.close();
  });

  it('heartbeats the locks of a batch that could not be sent one by one, at once and as overdue as they were', async () => {
    const { hooks, next, keeper } = batchHarness(2);
    next.set('lock-0', 'unbatchable');
    next.set('lock-1', 'unbatchable');
    await jest.advanceTimersByTimeAsync(PERIOD);
    expect(hooks.heartbeatFailed).not.toHaveBeenCalled();
    expect(hooks.heartbeat.mock.calls.map(([held]) => held.partitionKey).sort()).toEqual(['lock-0', 'lock-1']);
    for (const [, lagMs] of hooks.heartbeatConfirmed.mock.calls) expect(lagMs).toBeLessThan(5);
    keeper.close();
  });

  it('sends the one lock left after the others were given up as a lone heartbeat, not a batch of one', async () => {
    const { helds, hooks, keeper } = batchHarness(2);
    backdate(helds[1] as HeldLock, LEASE - MARGIN - PERIOD + 1); // its safe time ran out just before it was due
    await jest.advanceTimersByTimeAsync(PERIOD);
    expect(hooks.giveUp.mock.calls.map(([held]) => held.partitionKey)).toEqual(['lock-1']);
    expect(hooks.heartbeatBatch).not.toHaveBeenCalled();
    expect(hooks.heartbeat.mock.calls.map(([held]) => held.partitionKey)).toEqual(['lock-0']);
    expect(hooks.heartbeatConfirmed).toHaveBeenCalledTimes(1);
    keeper.close();
  });

  it('a batch that failed slowly says nothing of how long a heartbeat takes: locks acquired after it are heartbeated, not given up', async () => {
    const { hooks, keeper, track } = batchHarness(3);
    // The first batch gets no answer and ends 3 periods later, failed (as a request cut off by a stalled process would).
    hooks.heartbeatBatch.mockImplementationOnce(async (batch) => {
      await new Promise((resolve) => setTimeout(resolve, 3 * PERIOD));
      return batch.map(() => ({ outcome: 'failed', error: throttled() }));
    });
    await jest.advanceTimersByTimeAsync(PERIOD + 3 * PERIOD);
    hooks.giveUp.mockClear();
    const fresh = [0, 1, 2].map((i) => track(`fresh-${i}`));
    await jest.advanceTimersByTimeAsync(PERIOD);
    expect(hooks.giveUp.mock.calls.map(([held]) => held.partitionKey).filter((key) => key.startsWith('fresh'))).toEqual([]);
    expect(fresh.every((held) => held.state === 'held')).toBe(true);
    keeper.close();
  });

  it('gives up a lock of the batch with less safe time left than a heartbeat takes, and sends the others', async () => {
    const { helds, hooks, keeper } = batchHarness(3);
    backdate(helds[2] as HeldLock, LEASE - MARGIN - PERIOD + 1); // its safe time ran out just before it was due
    await jest.advanceTimersByTimeAsync(PERIOD);
    expect(hooks.giveUp.mock.calls.map(([held]) => held.partitionKey)).toEqual(['lock-2']);
    expect(keysOf(hooks.heartbeatBatch.mock.calls[0]?.[0] ?? [])).toEqual(['lock-0', 'lock-1']);
    keeper.close();
  });
});
