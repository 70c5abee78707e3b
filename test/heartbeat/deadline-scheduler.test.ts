/**
 * DeadlineScheduler: one unref'd timer in front of a deadline heap, with a
 * concurrency budget for limited (heartbeat) tasks. Fake timers drive both
 * setTimeout and performance.now(), so `systemClock` moves with them.
 */
import { afterEach, describe, expect, it, jest } from '@jest/globals';
import type { Logger } from '../../src/base/logger.js';
import { systemClock, type MonotonicClock } from '../../src/base/clock.js';
import { DeadlineScheduler, type ScheduledTask } from '../../src/heartbeat/deadline-scheduler.js';
import { useFakeTime } from '../../test-kit/jest/fake-time.js';

interface Deferred {
  readonly promise: Promise<void>;
  resolve(): void;
  reject(error: unknown): void;
}

function deferred(): Deferred {
  let resolve!: () => void;
  let reject!: (error: unknown) => void;
  const promise = new Promise<void>((res, rej) => {
    resolve = res;
    reject = rej;
  });
  return { promise, resolve, reject };
}

function fakeLogger(): { logger: Logger; error: jest.Mock } {
  const error = jest.fn<() => void>();
  const logger = {
    error,
    warn: jest.fn<() => void>(),
    info: jest.fn<() => void>(),
    debug: jest.fn<() => void>(),
    trace: jest.fn<() => void>(),
    fatal: jest.fn<() => void>(),
  } as unknown as Logger;
  return { logger, error };
}

// settle() lets settled promises run their continuations (the scheduler's finally → drain).
const { at, advanceTo, settle } = useFakeTime();

afterEach(() => {
  jest.restoreAllMocks();
});

/** A task with a kind of its own: most tests here follow one task at a time. */
function newTask<Subject>(
  scheduler: DeadlineScheduler<Subject>,
  run: () => Promise<void> | void,
  options: { limited: boolean; subject?: Subject },
): ScheduledTask<Subject> {
  return scheduler.createTask({ limited: options.limited, run }, options.subject as Subject);
}

function newScheduler(concurrency = 32, logger?: Logger, clock: MonotonicClock = systemClock): DeadlineScheduler {
  return new DeadlineScheduler({ clock, concurrency, logger });
}

describe('DeadlineScheduler: timing', () => {
  it('runs a task at its due time and not before', async () => {
    const scheduler = newScheduler();
    const run = jest.fn<() => void>();
    const task = newTask(scheduler, run, { limited: true });
    scheduler.schedule(task, at(100));
    expect(scheduler.size).toBe(1);

    await advanceTo(99);
    expect(run).not.toHaveBeenCalled();
    await advanceTo(100);
    expect(run).toHaveBeenCalledTimes(1);
    await advanceTo(10_000);
    expect(run).toHaveBeenCalledTimes(1);
    expect(scheduler.size).toBe(0);
    expect(jest.getTimerCount()).toBe(0);
  });

  it('runs unlimited tasks at their due time too', async () => {
    const scheduler = newScheduler();
    const run = jest.fn<() => void>();
    scheduler.schedule(newTask(scheduler, run, { limited: false }), at(250));
    await advanceTo(249);
    expect(run).not.toHaveBeenCalled();
    await advanceTo(250);
    expect(run).toHaveBeenCalledTimes(1);
  });

  it('runs the tasks of one kind with their own subjects, each when it is due', async () => {
    const scheduler = new DeadlineScheduler<string>({ clock: systemClock, concurrency: 32 });
    const run = jest.fn<(subject: string) => void>();
    const kind = { limited: true, run };
    scheduler.schedule(scheduler.createTask(kind, 'b'), at(200));
    scheduler.schedule(scheduler.createTask(kind, 'a'), at(100));
    scheduler.schedule(scheduler.createTask({ limited: false, run }, 'check'), at(150));
    await advanceTo(100);
    expect(run.mock.calls).toEqual([['a']]);
    await advanceTo(200);
    expect(run.mock.calls).toEqual([['a'], ['check'], ['b']]);
  });

  it('runs a task due now or in the past on the next tick', async () => {
    const scheduler = newScheduler();
    const run = jest.fn<() => void>();
    const task = newTask(scheduler, run, { limited: true });
    scheduler.schedule(task, at(-500));
    expect(run).not.toHaveBeenCalled(); // never synchronously inside schedule()
    await settle();
    expect(run).toHaveBeenCalledTimes(1);
  });

  it('runs several tasks in due order', async () => {
    const scheduler = newScheduler();
    const order: string[] = [];
    for (const [name, due] of [
      ['c', 300],
      ['a', 100],
      ['d', 400],
      ['b', 200],
    ] as const) {
      scheduler.schedule(
        newTask(
          scheduler,
          () => {
            order.push(`${name}@${performance.now() - at(0)}`);
          },
          { limited: name === 'a' || name === 'c' },
        ),
        at(due),
      );
    }
    await advanceTo(1_000);
    expect(order).toEqual(['a@100', 'b@200', 'c@300', 'd@400']);
  });

  it('does not run a task before the monotonic clock says it is due, even if the timer fires early', async () => {
    // The injected clock lags the timers: the timer fires, but the task is not yet due on our clock.
    let now = 0;
    const clock: MonotonicClock = { now: () => now };
    const scheduler = newScheduler(4, undefined, clock);
    const run = jest.fn<() => void>();
    scheduler.schedule(newTask(scheduler, run, { limited: true }), 100);

    now = 40; // timers say 100 ms passed; the clock says 40
    await jest.advanceTimersByTimeAsync(100);
    expect(run).not.toHaveBeenCalled();
    expect(scheduler.size).toBe(1);
    expect(jest.getTimerCount()).toBe(1); // it re-armed for the remainder

    now = 99;
    await jest.advanceTimersByTimeAsync(60);
    expect(run).not.toHaveBeenCalled();

    now = 100;
    await jest.advanceTimersByTimeAsync(100);
    expect(run).toHaveBeenCalledTimes(1);
  });

  it('rescheduling later moves the task', async () => {
    const scheduler = newScheduler();
    const run = jest.fn<() => void>();
    const task = newTask(scheduler, run, { limited: true });
    scheduler.schedule(task, at(100));
    scheduler.schedule(task, at(300));
    expect(scheduler.size).toBe(1);
    await advanceTo(299);
    expect(run).not.toHaveBeenCalled();
    await advanceTo(300);
    expect(run).toHaveBeenCalledTimes(1);
    await advanceTo(1_000);
    expect(run).toHaveBeenCalledTimes(1);
  });

  it('rescheduling earlier moves the task', async () => {
    const scheduler = newScheduler();
    const run = jest.fn<() => void>();
    const task = newTask(scheduler, run, { limited: false });
    scheduler.schedule(task, at(300));
    await advanceTo(10);
    scheduler.schedule(task, at(50));
    await advanceTo(49);
    expect(run).not.toHaveBeenCalled();
    await advanceTo(50);
    expect(run).toHaveBeenCalledTimes(1);
    await advanceTo(1_000);
    expect(run).toHaveBeenCalledTimes(1);
  });

  it('a task may reschedule itself from its own run (a periodic task)', async () => {
    const scheduler = newScheduler(1);
    const times: number[] = [];
    const task: ScheduledTask = newTask(
      scheduler,
      async () => {
        times.push(performance.now() - at(0));
        await Promise.resolve();
        if (times.length < 4) scheduler.schedule(task, performance.now() + 100);
      },
      { limited: true },
    );
    scheduler.schedule(task, at(100));
    await advanceTo(1_000);
    expect(times).toEqual([100, 200, 300, 400]);
  });

  it('cancel prevents a scheduled run', async () => {
    const scheduler = newScheduler();
    const run = jest.fn<() => void>();
    const other = jest.fn<() => void>();
    const task = newTask(scheduler, run, { limited: true });
    scheduler.schedule(task, at(100));
    scheduler.schedule(newTask(scheduler, other, { limited: true }), at(200));
    scheduler.cancel(task);
    expect(scheduler.size).toBe(1);
    await advanceTo(1_000);
    expect(run).not.toHaveBeenCalled();
    expect(other).toHaveBeenCalledTimes(1);
  });

  it('cancelling the only task leaves no timer; cancelling an unscheduled task is harmless', async () => {
    const scheduler = newScheduler();
    const run = jest.fn<() => void>();
    const task = newTask(scheduler, run, { limited: false });
    scheduler.cancel(task);
    scheduler.schedule(task, at(100));
    expect(jest.getTimerCount()).toBe(1);
    scheduler.cancel(task);
    scheduler.cancel(task);
    expect(jest.getTimerCount()).toBe(0);
    expect(scheduler.size).toBe(0);
    await advanceTo(1_000);
    expect(run).not.toHaveBeenCalled();
  });

  it('a cancelled task can be scheduled again', async () => {
    const scheduler = newScheduler();
    const run = jest.fn<() => void>();
    const task = newTask(scheduler, run, { limited: true });
    scheduler.schedule(task, at(100));
    scheduler.cancel(task);
    scheduler.schedule(task, at(200));
    await advanceTo(199);
    expect(run).not.toHaveBeenCalled();
    await advanceTo(200);
    expect(run).toHaveBeenCalledTimes(1);
  });
});

describe('DeadlineScheduler: concurrency', () => {
  it('runs at most `concurrency` limited tasks at once, and all of them eventually', async () => {
    const scheduler = newScheduler(3);
    let current = 0;
    let max = 0;
    const gates: Deferred[] = [];
    const started: number[] = [];
    for (let i = 0; i < 10; i++) {
      const task = newTask(
        scheduler,
        async () => {
          started.push(i);
          current++;
          max = Math.max(max, current);
          const gate = deferred();
          gates.push(gate);
          await gate.promise;
          current--;
        },
        { limited: true },
      );
      scheduler.schedule(task, at(100 + i));
    }
    await advanceTo(200);
    expect(current).toBe(3);
    expect(started).toEqual([0, 1, 2]);
    expect(scheduler.size).toBe(10); // 3 running + 7 waiting

    gates[0]?.resolve();
    await settle();
    expect(started).toEqual([0, 1, 2, 3]);
    expect(current).toBe(3);

    // Release everything as it starts.
    for (let i = 1; gates.length > i || current > 0; i++) {
      gates[i]?.resolve();
      await settle();
      if (i > 50) break;
    }
    expect(started).toEqual([0, 1, 2, 3, 4, 5, 6, 7, 8, 9]);
    expect(max).toBe(3);
    expect(current).toBe(0);
    expect(scheduler.size).toBe(0);
  });

  it('unlimited tasks bypass the budget', async () => {
    const scheduler = newScheduler(1);
    const blocker = deferred();
    const limitedSecond = jest.fn<() => void>();
    const unlimited = jest.fn(() => blocker.promise); // also never finishes until released
    scheduler.schedule(
      newTask(scheduler, () => blocker.promise, { limited: true }),
      at(10),
    );
    scheduler.schedule(newTask(scheduler, limitedSecond, { limited: true }), at(20));
    scheduler.schedule(newTask(scheduler, unlimited, { limited: false }), at(30));
    const unlimited2 = jest.fn<() => void>();
    scheduler.schedule(newTask(scheduler, unlimited2, { limited: false }), at(40));

    await advanceTo(100);
    expect(limitedSecond).not.toHaveBeenCalled();
    expect(unlimited).toHaveBeenCalledTimes(1);
    expect(unlimited2).toHaveBeenCalledTimes(1);

    blocker.resolve();
    await settle();
    expect(limitedSecond).toHaveBeenCalledTimes(1);
  });

  it('unlimited tasks do not use up the budget of limited ones', async () => {
    const scheduler = newScheduler(1);
    const never = deferred();
    scheduler.schedule(
      newTask(scheduler, () => never.promise, { limited: false }),
      at(10),
    );
    scheduler.schedule(
      newTask(scheduler, () => never.promise, { limited: false }),
      at(10),
    );
    const limited = jest.fn<() => void>();
    scheduler.schedule(newTask(scheduler, limited, { limited: true }), at(20));
    await advanceTo(20);
    expect(limited).toHaveBeenCalledTimes(1);
    never.resolve();
  });

  it('when behind, waiting limited tasks start most overdue first', async () => {
    const scheduler = newScheduler(1);
    const blocker = deferred();
    const order: string[] = [];
    scheduler.schedule(
      newTask(scheduler, () => blocker.promise, { limited: true }),
      at(10),
    );
    // Scheduled out of order, all due while the blocker holds the only slot.
    for (const [name, due] of [
      ['c', 50],
      ['a', 20],
      ['d', 60],
      ['b', 30],
    ] as const) {
      scheduler.schedule(
        newTask(
          scheduler,
          () => {
            order.push(name);
          },
          { limited: true },
        ),
        at(due),
      );
    }
    await advanceTo(35); // a and b fall due in one timer run or two; c, d later
    await advanceTo(100);
    expect(order).toEqual([]);
    expect(scheduler.size).toBe(5);

    blocker.resolve();
    await settle();
    expect(order).toEqual(['a', 'b', 'c', 'd']);
  });

  it('when behind, most overdue first also holds for tasks that fell due in one timer run', async () => {
    const scheduler = newScheduler(2);
    const blockers = [deferred(), deferred()];
    const order: number[] = [];
    for (const b of blockers)
      scheduler.schedule(
        newTask(scheduler, () => b.promise, { limited: true }),
        at(1),
      );
    // 50 tasks with shuffled deadlines, all overdue by the time the timer runs.
    const dues = Array.from({ length: 50 }, (_, i) => (i * 37) % 50);
    for (const due of dues) {
      scheduler.schedule(
        newTask(
          scheduler,
          () => {
            order.push(due);
          },
          { limited: true },
        ),
        at(10 + due),
      );
    }
    // Jump straight past every deadline: the timer finds them all due at once.
    await jest.advanceTimersByTimeAsync(at(1_000) - performance.now());
    expect(order).toEqual([]);
    blockers[0]?.resolve();
    blockers[1]?.resolve();
    await settle();
    expect(order).toEqual([...dues].sort((x, y) => x - y));
  });

  it('a task scheduled already overdue starts before less overdue tasks that were waiting', async () => {
    const scheduler = newScheduler(1);
    const blocker = deferred();
    const order: string[] = [];
    scheduler.schedule(
      newTask(scheduler, () => blocker.promise, { limited: true }),
      at(10),
    );
    scheduler.schedule(
      newTask(
        scheduler,
        () => {
          order.push('due-50');
        },
        { limited: true },
      ),
      at(50),
    );
    await advanceTo(100); // due-50 is now waiting for the slot
    scheduler.schedule(
      newTask(
        scheduler,
        () => {
          order.push('due-5');
        },
        { limited: true },
      ),
      at(5),
    );
    await settle();
    blocker.resolve();
    await settle();
    expect(order).toEqual(['due-5', 'due-50']);
  });

  it('cancel removes a task that is waiting for a slot', async () => {
    const scheduler = newScheduler(1);
    const blocker = deferred();
    const waiting = jest.fn<() => void>();
    const after = jest.fn<() => void>();
    scheduler.schedule(
      newTask(scheduler, () => blocker.promise, { limited: true }),
      at(10),
    );
    const task = newTask(scheduler, waiting, { limited: true });
    scheduler.schedule(task, at(20));
    scheduler.schedule(newTask(scheduler, after, { limited: true }), at(30));
    await advanceTo(50);
    expect(scheduler.overdueMs()).toBe(30); // the task due at 20 waits for the slot
    expect(scheduler.size).toBe(3);

    scheduler.cancel(task);
    expect(task.heapIndex).toBe(-1);
    expect(scheduler.overdueMs()).toBe(20); // now the task due at 30 is next
    expect(scheduler.size).toBe(2);
    blocker.resolve();
    await settle();
    expect(waiting).not.toHaveBeenCalled();
    expect(after).toHaveBeenCalledTimes(1);
  });

  it('cancel does not interrupt a run already under way', async () => {
    const scheduler = newScheduler(1);
    const gate = deferred();
    let finished = false;
    const task = newTask(
      scheduler,
      async () => {
        await gate.promise;
        finished = true;
      },
      { limited: true },
    );
    const next = jest.fn<() => void>();
    scheduler.schedule(task, at(10));
    scheduler.schedule(newTask(scheduler, next, { limited: true }), at(20));
    await advanceTo(30);
    expect(finished).toBe(false); // under way
    scheduler.cancel(task);
    expect(next).not.toHaveBeenCalled(); // the slot is still taken
    gate.resolve();
    await settle();
    expect(finished).toBe(true);
    expect(next).toHaveBeenCalledTimes(1);
  });

  it('a task rescheduled while waiting for a slot is never queued twice', async () => {
    const scheduler = newScheduler(1);
    const blocker = deferred();
    const run = jest.fn<() => void>();
    scheduler.schedule(
      newTask(scheduler, () => blocker.promise, { limited: true }),
      at(10),
    );
    const task = newTask(scheduler, run, { limited: true });
    scheduler.schedule(task, at(20));
    await advanceTo(30);
    expect(scheduler.overdueMs()).toBe(10); // due at 20, waiting for the slot

    scheduler.schedule(task, at(40));
    await advanceTo(50);
    expect(scheduler.size).toBe(2); // blocker + task, once

    blocker.resolve();
    await settle();
    await advanceTo(1_000);
    expect(run).toHaveBeenCalledTimes(1);
  });
  // Same defect as above, worse consequence: the cancelled task still runs.
  it('cancel() prevents the run of a task that was rescheduled while waiting for a slot', async () => {
    const scheduler = newScheduler(1);
    const blocker = deferred();
    const run = jest.fn<() => void>();
    scheduler.schedule(
      newTask(scheduler, () => blocker.promise, { limited: true }),
      at(10),
    );
    const task = newTask(scheduler, run, { limited: true });
    scheduler.schedule(task, at(20));
    await advanceTo(30);
    scheduler.schedule(task, at(40));
    await advanceTo(50);

    scheduler.cancel(task);
    blocker.resolve();
    await settle();
    await advanceTo(1_000);
    expect(run).not.toHaveBeenCalled();
  });
});

describe('DeadlineScheduler: failures', () => {
  it.each([
    ['throws synchronously', true],
    ['returns a rejected promise', false],
  ])('a task that %s does not stop later tasks, and is logged', async (_label, sync) => {
    const { logger, error } = fakeLogger();
    const scheduler = newScheduler(1, logger);
    const boom = new Error('boom');
    const bad = newTask(
      scheduler,
      sync
        ? () => {
            throw boom;
          }
        : () => Promise.reject(boom),
      { limited: true },
    );
    const later = jest.fn<() => void>();
    const unlimitedLater = jest.fn<() => void>();
    scheduler.schedule(bad, at(10));
    scheduler.schedule(newTask(scheduler, later, { limited: true }), at(20));
    scheduler.schedule(newTask(scheduler, unlimitedLater, { limited: false }), at(30));
    await advanceTo(100);

    expect(later).toHaveBeenCalledTimes(1); // the failed task gave its slot back
    expect(unlimitedLater).toHaveBeenCalledTimes(1);
    expect(scheduler.size).toBe(0);
    expect(error).toHaveBeenCalledTimes(1);
    const [fields] = error.mock.calls[0] as [{ err?: unknown }, ...unknown[]];
    expect(fields.err).toBe(boom);
  });

  it('an unlimited task that fails does not stop later tasks', async () => {
    const { logger, error } = fakeLogger();
    const scheduler = newScheduler(1, logger);
    scheduler.schedule(
      newTask(
        scheduler,
        () => {
          throw new Error('monitor failed');
        },
        { limited: false },
      ),
      at(10),
    );
    const later = jest.fn<() => void>();
    scheduler.schedule(newTask(scheduler, later, { limited: false }), at(10));
    await advanceTo(20);
    expect(later).toHaveBeenCalledTimes(1);
    expect(error).toHaveBeenCalledTimes(1);
  });

  it('without a logger a failing task is swallowed quietly', async () => {
    const scheduler = newScheduler(1);
    const later = jest.fn<() => void>();
    scheduler.schedule(
      newTask(scheduler, () => Promise.reject(new Error('x')), { limited: true }),
      at(10),
    );
    scheduler.schedule(newTask(scheduler, later, { limited: true }), at(20));
    await advanceTo(100);
    expect(later).toHaveBeenCalledTimes(1);
  });
});

describe('DeadlineScheduler: close', () => {
  it('close() stops scheduled and waiting tasks and leaves no timer', async () => {
    const scheduler = newScheduler(1);
    const blocker = deferred();
    const waiting = jest.fn<() => void>();
    const scheduled = jest.fn<() => void>();
    let blockerDone = false;
    scheduler.schedule(
      newTask(
        scheduler,
        async () => {
          await blocker.promise;
          blockerDone = true;
        },
        { limited: true },
      ),
      at(10),
    );
    const waitingTask = newTask(scheduler, waiting, { limited: true });
    scheduler.schedule(waitingTask, at(20));
    const scheduledTask = newTask(scheduler, scheduled, { limited: false });
    scheduler.schedule(scheduledTask, at(500));
    await advanceTo(100);
    expect(scheduler.overdueMs()).toBe(80); // due at 20, waiting for the slot

    scheduler.close();
    expect(jest.getTimerCount()).toBe(0);
    expect(waitingTask.heapIndex).toBe(-1);
    expect(scheduler.overdueMs()).toBe(0);
    expect(scheduledTask.heapIndex).toBe(-1);

    blocker.resolve(); // the run under way finishes
    await settle();
    await advanceTo(10_000);
    expect(blockerDone).toBe(true);
    expect(waiting).not.toHaveBeenCalled();
    expect(scheduled).not.toHaveBeenCalled();
    expect(scheduler.size).toBe(0);
  });

  it('schedule() after close() is a no-op', async () => {
    const scheduler = newScheduler();
    scheduler.close();
    const run = jest.fn<() => void>();
    const task = newTask(scheduler, run, { limited: false });
    scheduler.schedule(task, at(10));
    expect(jest.getTimerCount()).toBe(0);
    expect(scheduler.size).toBe(0);
    expect(task.heapIndex).toBe(-1);
    await advanceTo(1_000);
    expect(run).not.toHaveBeenCalled();
  });

  it('a running task that reschedules itself after close() does not run again', async () => {
    const scheduler = newScheduler(1);
    const gate = deferred();
    const run = jest.fn(async () => {
      await gate.promise;
      scheduler.schedule(task, performance.now() + 10);
    });
    const task = newTask(scheduler, run, { limited: true });
    scheduler.schedule(task, at(10));
    await advanceTo(20);
    scheduler.close();
    gate.resolve();
    await settle();
    await advanceTo(1_000);
    expect(run).toHaveBeenCalledTimes(1);
    expect(jest.getTimerCount()).toBe(0);
  });

  it('close() is idempotent and cancel() after close() is harmless', () => {
    const scheduler = newScheduler();
    const task = newTask(scheduler, () => undefined, { limited: true });
    scheduler.schedule(task, at(10));
    scheduler.close();
    scheduler.close();
    scheduler.cancel(task);
    expect(jest.getTimerCount()).toBe(0);
  });
});

describe('DeadlineScheduler: the timer', () => {
  it("every timer it creates is unref'd (never keeps the process alive)", async () => {
    // Fake timers implement ref/unref/hasRef like Node's Timeout, so check the objects themselves.
    const setTimeoutSpy = jest.spyOn(globalThis, 'setTimeout');
    const scheduler = newScheduler(2);
    const task = newTask(scheduler, () => undefined, { limited: true });
    scheduler.schedule(task, at(300));
    scheduler.schedule(
      newTask(scheduler, () => undefined, { limited: false }),
      at(100),
    ); // re-arms earlier
    await advanceTo(100); // fires, re-arms for 300
    scheduler.schedule(task, at(150)); // re-arms earlier again
    await advanceTo(400);

    const timers = setTimeoutSpy.mock.results.map((r) => r.value as NodeJS.Timeout);
    expect(timers.length).toBeGreaterThanOrEqual(3);
    for (const timer of timers) {
      expect(typeof timer.hasRef).toBe('function');
      expect(timer.hasRef()).toBe(false);
    }
  });

  it('keeps at most one timer whatever the number of tasks', async () => {
    const scheduler = newScheduler(8);
    let seed = 7;
    const random = (): number => {
      seed = (seed * 1103515245 + 12345) % 2147483648;
      return seed / 2147483648;
    };
    const ran: number[] = [];
    const tasks: ScheduledTask[] = [];
    for (let i = 0; i < 1000; i++) {
      const due = Math.floor(random() * 10_000);
      const task = newTask(
        scheduler,
        async () => {
          ran.push(due);
          await Promise.resolve();
        },
        { limited: i % 3 !== 0 },
      );
      tasks.push(task);
      scheduler.schedule(task, at(due));
      expect(jest.getTimerCount()).toBeLessThanOrEqual(1);
    }
    expect(jest.getTimerCount()).toBe(1);
    expect(scheduler.size).toBe(1000);

    // Reschedule and cancel a few hundred.
    for (let i = 0; i < 300; i++) {
      const task = tasks[Math.floor(random() * tasks.length)] as ScheduledTask;
      if (i % 2 === 0) scheduler.cancel(task);
      else scheduler.schedule(task, at(Math.floor(random() * 10_000)));
      expect(jest.getTimerCount()).toBeLessThanOrEqual(1);
    }
    const expectedRuns = tasks.filter((t) => t.heapIndex >= 0).length;

    for (let ms = 0; ms <= 10_000; ms += 250) {
      await advanceTo(ms);
      expect(jest.getTimerCount()).toBeLessThanOrEqual(1);
    }
    await advanceTo(11_000);
    expect(ran).toHaveLength(expectedRuns);
    expect(jest.getTimerCount()).toBe(0);
    expect(scheduler.size).toBe(0);
  });
});

describe('DeadlineScheduler: how far behind', () => {
  it('overdueMs is how long the most overdue heartbeat has waited to be sent, 0 when none waits', async () => {
    const scheduler = newScheduler(1);
    expect(scheduler.overdueMs()).toBe(0);
    const running = deferred();
    scheduler.schedule(
      newTask(scheduler, () => running.promise, { limited: true }),
      at(100),
    );
    scheduler.schedule(
      newTask(scheduler, () => undefined, { limited: true }),
      at(150),
    );
    scheduler.schedule(
      newTask(scheduler, () => undefined, { limited: false }),
      at(120),
    ); // not a heartbeat
    await advanceTo(149);
    expect(scheduler.overdueMs()).toBe(0); // one heartbeat runs, none waits
    await advanceTo(400);
    expect(scheduler.overdueMs()).toBe(250);
    running.resolve();
    await settle();
    expect(scheduler.overdueMs()).toBe(0);
    scheduler.close();
  });
});

interface Batching {
  scheduler: DeadlineScheduler<string>;
  /** The subjects of each batch, in the order the batches started. */
  batches: string[][];
  /** Subjects whose own `run` was called. */
  alone: string[];
  /** Finishes every batch and lone run started so far. */
  finishAll(): void;
  add(subject: string, dueAt: number, options?: { alone: boolean }): ScheduledTask<string>;
  /** From now on, whether `subject` may join a batch. */
  setAlone(subject: string, alone: boolean): void;
}

/** `maxWaitMs` 0: a part-full batch never waits for company unless a test asks it to. */
function batching(concurrency: number, batchSize: number, maxWaitMs = 0, largestSize = batchSize): Batching {
  const batches: string[][] = [];
  const alone: string[] = [];
  const gates: Deferred[] = [];
  const gated = (): Promise<void> => {
    const gate = deferred();
    gates.push(gate);
    return gate.promise;
  };
  const loners = new Set<string>();
  const scheduler = new DeadlineScheduler<string>({
    clock: systemClock,
    concurrency,
    batches: {
      size: batchSize,
      canJoin: (task) => !loners.has(task.subject),
      run: (tasks) => {
        batches.push(tasks.map((task) => task.subject));
        return gated();
      },
      maxWaitMs,
      largestSize,
    },
  });
  return {
    scheduler,
    batches,
    alone,
    finishAll: () => gates.splice(0).forEach((gate) => gate.resolve()),
    setAlone: (subject, alone) => void (alone ? loners.add(subject) : loners.delete(subject)),
    add: (subject, dueAt, options = { alone: false }) => {
      if (options.alone) loners.add(subject);
      const task = newTask(
        scheduler,
        () => {
          alone.push(subject);
          return gated();
        },
        { limited: true, subject },
      );
      scheduler.schedule(task, dueAt);
      return task;
    },
  };
}

describe('DeadlineScheduler: batches', () => {
  it('puts due batchable tasks into one slot, most overdue first, up to the batch size', async () => {
    const { scheduler, batches, alone, finishAll, add } = batching(1, 3);
    add('blocker', at(10));
    for (const [i, name] of ['a', 'b', 'c', 'd', 'e'].entries()) add(name, at(20 + i));
    await advanceTo(15);
    expect(alone).toEqual(['blocker']); // nothing else due yet: a lone task runs on its own
    await advanceTo(100);
    finishAll();
    await settle();
    expect(batches).toEqual([['a', 'b', 'c']]);
    finishAll();
    await settle();
    expect(batches).toEqual([
      ['a', 'b', 'c'],
      ['d', 'e'],
    ]);
    expect(alone).toEqual(['blocker']);
    finishAll();
    await settle();
    expect(scheduler.size).toBe(0);
  });

  it('counts a batch as one slot of the concurrency budget', async () => {
    const { batches, alone, finishAll, add } = batching(8, 25);
    for (let i = 0; i < 40; i++) add(`lock-${i}`, at(10));
    await advanceTo(20);
    expect(batches.map((batch) => batch.length)).toEqual([25, 15]);
    expect(alone).toEqual([]);
    finishAll();
    await settle();
  });

  it('lets batches take a quarter of the slots; the batchable tasks behind them wait for a batch to come back', async () => {
    const { batches, alone, finishAll, add } = batching(8, 5);
    add('solo', at(5), { alone: true });
    for (let i = 0; i < 15; i++) add(`lock-${i}`, at(10));
    await advanceTo(20);
    expect(alone).toEqual(['solo']);
    expect(batches.map((batch) => batch.length)).toEqual([5, 5]); // 2 of 8 slots; 5 more slots are free
    finishAll();
    await settle();
    expect(batches.map((batch) => batch.length)).toEqual([5, 5, 5]);
    finishAll();
    await settle();
  });

  it('starts a lone task in a free slot while batchable tasks more overdue wait for a batch slot', async () => {
    // A lone retry of a lock in danger must not wait for a batch of other locks to come back.
    const { batches, alone, finishAll, add } = batching(8, 5);
    for (let i = 0; i < 15; i++) add(`lock-${i}`, at(10));
    add('retry', at(12), { alone: true });
    await advanceTo(20);
    expect(batches.map((batch) => batch.length)).toEqual([5, 5]); // the batch slots are full: five batchable tasks wait
    expect(alone).toEqual(['retry']);
    finishAll();
    await settle();
    expect(batches.map((batch) => batch.length)).toEqual([5, 5, 5]);
    finishAll();
    await settle();
  });

  it('gives batches smaller than the largest size more slots, as many as hold the same number of tasks', async () => {
    // 8 slots, a quarter of them for batches of up to 5 (10 tasks in flight); batches are 2 now.
    const { batches, finishAll, add } = batching(8, 2, 0, 5);
    for (let i = 0; i < 16; i++) add(`lock-${i}`, at(10));
    await advanceTo(20);
    expect(batches.map((batch) => batch.length)).toEqual([2, 2, 2, 2, 2]);
    finishAll();
    await settle();
    expect(batches.map((batch) => batch.length)).toEqual([2, 2, 2, 2, 2, 2, 2, 2]);
    finishAll();
    await settle();
  });

  it('leaves tasks that are not due yet for later', async () => {
    const { batches, alone, finishAll, add } = batching(1, 25);
    add('early', at(10));
    add('now', at(10));
    add('later', at(500));
    await advanceTo(20);
    expect(batches).toEqual([['early', 'now']]);
    finishAll();
    await advanceTo(600);
    expect(batches).toEqual([['early', 'now']]);
    expect(alone).toEqual(['later']); // due alone at its own time: a batch of one is a lone run
    finishAll();
    await settle();
  });

  it('runs a task that may not join a batch on its own, and batches the tasks around it', async () => {
    const { batches, alone, finishAll, add } = batching(1, 25);
    add('blocker', at(5));
    add('a', at(10));
    add('b', at(11));
    add('solo', at(12), { alone: true });
    add('c', at(13));
    await advanceTo(20);
    for (let i = 0; i < 3; i++) {
      finishAll();
      await settle();
    }
    expect(batches).toEqual([['a', 'b', 'c']]);
    expect(alone).toEqual(['blocker', 'solo']);
    finishAll();
    await settle();
  });

  it('asks whether a task may join a batch when it is scheduled, and again when it is due', async () => {
    const { scheduler, batches, alone, finishAll, add, setAlone } = batching(4, 25);
    add('a', at(10));
    add('b', at(5));
    setAlone('b', true); // scheduled batchable, lone by the time it is due
    const moved = add('c', at(12), { alone: true });
    setAlone('c', false);
    scheduler.schedule(moved, at(10)); // rescheduled once it may join: one run, in a batch
    await advanceTo(20);
    expect(batches.map((batch) => [...batch].sort())).toEqual([['a', 'c']]);
    expect(alone).toEqual(['b']);
    finishAll();
    await settle();
    expect(scheduler.size).toBe(0);
  });

  it('with a batch size of 1, every task runs on its own', async () => {
    const { batches, alone, finishAll, add } = batching(4, 1);
    for (const name of ['a', 'b', 'c']) add(name, at(10));
    await advanceTo(20);
    expect(batches).toEqual([]);
    expect([...alone].sort()).toEqual(['a', 'b', 'c']);
    finishAll();
    await settle();
  });

  it('a batch that throws is logged and frees its slot', async () => {
    const { logger, error } = fakeLogger();
    const ran: string[][] = [];
    const scheduler = new DeadlineScheduler<string>({
      clock: systemClock,
      concurrency: 1,
      logger,
      batches: {
        size: 25,
        canJoin: () => true,
        run: async (tasks) => {
          ran.push(tasks.map((task) => task.subject));
          throw new Error('broken batch');
        },
        maxWaitMs: 0,
        largestSize: 25,
      },
    });
    for (const name of ['a', 'b'])
      scheduler.schedule(
        newTask(scheduler, () => undefined, { limited: true, subject: name }),
        at(10),
      );
    for (const name of ['c', 'd'])
      scheduler.schedule(
        newTask(scheduler, () => undefined, { limited: true, subject: name }),
        at(50),
      );
    await advanceTo(100);
    expect(ran).toEqual([
      ['a', 'b'],
      ['c', 'd'],
    ]);
    expect(error).toHaveBeenCalledTimes(2);
    expect(scheduler.size).toBe(0);
  });
});

describe('DeadlineScheduler: part-full batches wait for company', () => {
  /**
   * Concurrency 8 and a wait of up to 100 ms, with one batch (a, b) in
   * flight: an eighth of the slots, enough to hold back a part-full batch.
   */
  async function oneBatchInFlight(batchSize: number): Promise<Batching> {
    const inFlight = batching(8, batchSize, 100);
    inFlight.add('a', at(10));
    inFlight.add('b', at(10));
    await advanceTo(15);
    expect(inFlight.batches).toEqual([['a', 'b']]); // nothing was in flight: no waiting
    return inFlight;
  }

  it('holds a part-full batch back while a call is in flight, and sends it when the call comes back', async () => {
    const { scheduler, batches, alone, finishAll, add } = await oneBatchInFlight(5);
    add('c', at(20));
    add('d', at(30));
    await advanceTo(60);
    expect(batches).toEqual([['a', 'b']]);
    expect(alone).toEqual([]);
    expect(scheduler.overdueMs()).toBe(40); // c has been due for 40 ms, held back
    finishAll();
    await settle();
    expect(batches).toEqual([
      ['a', 'b'],
      ['c', 'd'],
    ]);
    finishAll();
    await settle();
    expect(scheduler.size).toBe(0);
  });

  it('a lone task behind a part-full batch held back for company starts at once', async () => {
    const { batches, alone, finishAll, add } = await oneBatchInFlight(5);
    add('c', at(20));
    add('retry', at(25), { alone: true });
    await advanceTo(30);
    expect(alone).toEqual(['retry']);
    expect(batches).toEqual([['a', 'b']]); // c still waits for company
    finishAll();
    await settle();
  });

  it('sends a full batch at once while calls are in flight', async () => {
    const { batches, alone, finishAll, add } = await oneBatchInFlight(3);
    for (const name of ['c', 'd', 'e']) add(name, at(20));
    add('f', at(30));
    await advanceTo(50);
    expect(batches).toEqual([
      ['a', 'b'],
      ['c', 'd', 'e'],
    ]);
    expect(alone).toEqual([]); // f waits: the two batches in flight are all a quarter of 8 slots allows
    finishAll();
    await settle();
    expect(alone).toEqual(['f']);
    finishAll();
    await settle();
  });

  it('sends a part-full batch once it has waited maxWaitMs, without spinning meanwhile', async () => {
    const { scheduler, batches, alone, finishAll, add } = await oneBatchInFlight(5);
    add('c', at(20));
    add('d', at(50));
    await advanceTo(119);
    expect(alone).toEqual([]);
    expect(jest.getTimerCount()).toBe(1); // one timer, for the end of c's wait
    await advanceTo(120);
    expect(batches).toEqual([
      ['a', 'b'],
      ['c', 'd'],
    ]);
    expect(alone).toEqual([]);
    finishAll();
    await settle();
    expect(scheduler.size).toBe(0);
  });

  it('does not hold back a task that may not join a batch', async () => {
    const { batches, alone, finishAll, add } = await oneBatchInFlight(5);
    add('solo', at(20), { alone: true });
    await advanceTo(20);
    expect(batches).toEqual([['a', 'b']]);
    expect(alone).toEqual(['solo']);
    finishAll();
    await settle();
  });

  it('waits for company only once an eighth of the slots is busy', async () => {
    const { alone, finishAll, add } = batching(32, 25, 100);
    for (let i = 0; i < 5; i++) add(`lock-${i}`, at(10 + 10 * i));
    await advanceTo(45);
    expect(alone).toEqual(['lock-0', 'lock-1', 'lock-2', 'lock-3']); // each alone, none yet waiting
    await advanceTo(100);
    expect(alone).toHaveLength(4); // lock-4 waits: 4 of 32 slots are busy
    finishAll();
    await settle();
    expect(alone).toHaveLength(5);
    finishAll();
    await settle();
  });
});
