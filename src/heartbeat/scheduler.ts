/**
 * The one scheduler of a lock client. Every held lock has a heartbeat task,
 * an expiry check and, with a session monitor, a monitor check; all of them
 * wait in deadline heaps behind a single timer. Heartbeats run at most
 * `concurrency` at a time, most overdue first. The timer is unref'd: a
 * client holding locks never keeps the process alive by itself.
 */
import type { Logger } from 'pino';
import type { MonotonicClock } from '../clock.js';
import { DeadlineHeap, type HeapEntry } from './deadline-heap.js';

export interface ScheduledTask extends HeapEntry {
  /** Heartbeats (limited) share the concurrency budget; expiry and monitor checks (unlimited) run at once. */
  readonly limited: boolean;
  readonly run: () => Promise<void> | void;
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
  /**
   * Limited tasks by due time. A due one stays here until a slot is free, so
   * the top is always the most overdue: a heartbeat is one removal from this
   * heap, however far behind the client is.
   */
  readonly #limited = new DeadlineHeap<ScheduledTask>();
  readonly #unlimited = new DeadlineHeap<ScheduledTask>();
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
    return { dueAt: Infinity, heapIndex: -1, limited: options.limited, run, running: false };
  }

  /** Runs `task` at `dueAt` on the monotonic clock (rescheduling it if already scheduled). */
  schedule(task: ScheduledTask, dueAt: number): void {
    if (this.#closed) return;
    this.#heapOf(task).upsert(task, dueAt);
    this.#arm();
  }

  /** Takes the task off the schedule; a run already under way finishes. */
  cancel(task: ScheduledTask): void {
    this.#heapOf(task).remove(task);
    this.#arm();
  }

  /** How long the most overdue heartbeat waiting for a free slot has been due, in ms; 0 when none waits. */
  overdueMs(): number {
    if (this.#running < this.#concurrency) return 0;
    const waiting = this.#limited.peek();
    return waiting === undefined ? 0 : Math.max(0, this.#clock.now() - waiting.dueAt);
  }

  /** Heartbeats and checks scheduled or running. */
  get size(): number {
    return this.#limited.size + this.#unlimited.size + this.#running;
  }

  close(): void {
    this.#closed = true;
    this.#limited.clear();
    this.#unlimited.clear();
    this.#disarm();
  }

  #heapOf(task: ScheduledTask): DeadlineHeap<ScheduledTask> {
    return task.limited ? this.#limited : this.#unlimited;
  }

  #disarm(): void {
    if (this.#timer !== undefined) clearTimeout(this.#timer);
    this.#timer = undefined;
    this.#timerDueAt = Infinity;
  }

  /** Sets the timer for the next task that could start: limited ones only while a slot is free. */
  #arm(): void {
    const unlimited = this.#unlimited.peek()?.dueAt ?? Infinity;
    const limited = this.#running < this.#concurrency ? (this.#limited.peek()?.dueAt ?? Infinity) : Infinity;
    const next = Math.min(unlimited, limited);
    if (next === Infinity || this.#closed) {
      this.#disarm();
      return;
    }
    if (this.#timer !== undefined && this.#timerDueAt <= next) return;
    this.#disarm();
    this.#timerDueAt = next;
    this.#timer = setTimeout(() => this.#onTimer(), Math.max(0, next - this.#clock.now()));
    this.#timer.unref();
  }

  #onTimer(): void {
    this.#timer = undefined;
    this.#timerDueAt = Infinity;
    const now = this.#clock.now();
    for (let task = this.#unlimited.peek(); task !== undefined && task.dueAt - now < TIMER_SLACK_MS; task = this.#unlimited.peek()) {
      this.#unlimited.remove(task);
      void this.#execute(task);
    }
    this.#drain();
    this.#arm();
  }

  /** Starts due heartbeats, most overdue first, while slots are free. */
  #drain(): void {
    const now = this.#clock.now();
    while (this.#running < this.#concurrency) {
      const task = this.#limited.peek();
      if (task === undefined || task.dueAt - now >= TIMER_SLACK_MS) return;
      this.#limited.remove(task);
      void this.#execute(task);
    }
  }

  async #execute(task: ScheduledTask): Promise<void> {
    task.running = true;
    if (task.limited) this.#running++;
    try {
      await task.run();
    } catch (error) {
      // Tasks handle their own failures; this only keeps the loop alive if one does not.
      this.#logger?.error({ err: error }, 'lock scheduler task failed');
    } finally {
      task.running = false;
      if (task.limited) {
        this.#running--;
        this.#drain();
        this.#arm();
      }
    }
  }
}
