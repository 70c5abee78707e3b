/**
 * The one scheduler of a lock client. Every held lock has a heartbeat task
 * and, with a session monitor, a monitor task; all of them wait in one
 * deadline heap behind a single timer. Heartbeats run at most `concurrency`
 * at a time, most overdue first. The timer is unref'd: a client holding locks
 * never keeps the process alive by itself.
 */
import type { Logger } from 'pino';
import type { MonotonicClock } from '../clock.js';
import { DeadlineHeap, type HeapEntry } from './deadline-heap.js';

export interface ScheduledTask extends HeapEntry {
  /** Heartbeats (limited) share the concurrency budget; monitor checks (unlimited) run at once. */
  readonly limited: boolean;
  readonly run: () => Promise<void> | void;
  /** Waiting for a concurrency slot. */
  pending: boolean;
  running: boolean;
}

export interface SchedulerOptions {
  readonly clock: MonotonicClock;
  /** Most heartbeats in flight at once. */
  readonly concurrency: number;
  readonly logger?: Logger | undefined;
}

/** Timers may fire a fraction of a millisecond before the monotonic clock says the task is due. */
const TIMER_SLACK_MS = 1;

export class HeartbeatScheduler {
  readonly #heap = new DeadlineHeap<ScheduledTask>();
  /** Due heartbeats waiting for a concurrency slot, most overdue on top. A task is in at most one of the two heaps. */
  readonly #pending = new DeadlineHeap<ScheduledTask>();
  readonly #clock: MonotonicClock;
  readonly #concurrency: number;
  readonly #logger: Logger | undefined;
  #running = 0;
  #timer: NodeJS.Timeout | undefined;
  #timerDueAt = Infinity;
  #closed = false;

  constructor(options: SchedulerOptions) {
    this.#clock = options.clock;
    this.#concurrency = options.concurrency;
    this.#logger = options.logger;
  }

  createTask(run: () => Promise<void> | void, options: { limited: boolean }): ScheduledTask {
    return { dueAt: Infinity, heapIndex: -1, limited: options.limited, run, pending: false, running: false };
  }

  /** Runs `task` at `dueAt` on the monotonic clock (rescheduling it if already scheduled). */
  schedule(task: ScheduledTask, dueAt: number): void {
    if (this.#closed) return;
    this.#unpend(task);
    this.#heap.upsert(task, dueAt);
    this.#arm();
  }

  /** Takes the task off the schedule; a run already under way finishes. */
  cancel(task: ScheduledTask): void {
    this.#heap.remove(task);
    this.#unpend(task);
    this.#arm();
  }

  /** How long the most overdue heartbeat waiting for a free slot has been due, in ms; 0 when none waits. */
  overdueMs(): number {
    const waiting = this.#pending.peek();
    return waiting === undefined ? 0 : Math.max(0, this.#clock.now() - waiting.dueAt);
  }

  /** Heartbeats and monitor checks waiting or running. */
  get size(): number {
    return this.#heap.size + this.#pending.size + this.#running;
  }

  close(): void {
    this.#closed = true;
    this.#heap.clear();
    while (this.#pending.size > 0) this.#unpend(this.#pending.peek() as ScheduledTask);
    this.#disarm();
  }

  #unpend(task: ScheduledTask): void {
    if (!task.pending) return;
    task.pending = false;
    this.#pending.remove(task);
  }

  #disarm(): void {
    if (this.#timer !== undefined) clearTimeout(this.#timer);
    this.#timer = undefined;
    this.#timerDueAt = Infinity;
  }

  #arm(): void {
    const next = this.#heap.peek();
    if (next === undefined || this.#closed) {
      this.#disarm();
      return;
    }
    if (this.#timer !== undefined && this.#timerDueAt <= next.dueAt) return;
    this.#disarm();
    this.#timerDueAt = next.dueAt;
    const delay = Math.max(0, next.dueAt - this.#clock.now());
    this.#timer = setTimeout(() => this.#onTimer(), delay);
    this.#timer.unref();
  }

  #onTimer(): void {
    this.#timer = undefined;
    this.#timerDueAt = Infinity;
    const now = this.#clock.now();
    for (let task = this.#heap.peek(); task !== undefined && task.dueAt - now < TIMER_SLACK_MS; task = this.#heap.peek()) {
      this.#heap.remove(task);
      if (task.limited) {
        task.pending = true;
        this.#pending.upsert(task, task.dueAt);
      } else {
        void this.#execute(task);
      }
    }
    this.#drain();
    this.#arm();
  }

  #drain(): void {
    while (this.#running < this.#concurrency && this.#pending.size > 0) {
      const task = this.#pending.pop() as ScheduledTask;
      task.pending = false;
      this.#running++;
      void this.#execute(task).finally(() => {
        this.#running--;
        this.#drain();
      });
    }
  }

  async #execute(task: ScheduledTask): Promise<void> {
    task.running = true;
    try {
      await task.run();
    } catch (error) {
      // Tasks handle their own failures; this only keeps the loop alive if one does not.
      this.#logger?.error({ err: error }, 'lock scheduler task failed');
    } finally {
      task.running = false;
    }
  }
}
