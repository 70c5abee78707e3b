/**
 * A deadline scheduler: tasks wait in deadline heaps behind a single timer
 * and run when due. Limited tasks run at most `concurrency` at a time, most
 * overdue first, and limited tasks due together may share one slot as a
 * batch; unlimited ones run at once. The timer is unref'd: scheduled work
 * never keeps the process alive by itself.
 *
 * The lock keeper (lock-keeper.ts) runs one per client: each held lock
 * has a heartbeat task (limited), an expiry check and, with a session
 * monitor, a monitor check.
 *
 * Part-full batches are held back a little, as Nagle's algorithm holds back
 * small TCP segments, and batches take only a share of the slots. A task
 * that may not join a batch (a lone retry of a lock in danger) never waits
 * behind batchable tasks that are held back: it takes any free slot.
 */
import type { Logger } from '../base/logger.js';
import type { MonotonicClock } from '../base/clock.js';
import { DeadlineHeap, type HeapEntry } from './deadline-heap.js';

/**
 * What tasks of one kind do when due (a lock's heartbeat, its expiry check).
 * Every task of a kind shares it, so that a task costs no closure of its own:
 * with tens of thousands of locks, a closure and its context per task would
 * weigh more than the task.
 */
export interface TaskKind<Subject> {
  /** Heartbeats (limited) share the concurrency budget; expiry and monitor checks (unlimited) run at once. */
  readonly limited: boolean;
  run(subject: Subject): Promise<void> | void;
}

export interface ScheduledTask<Subject = unknown> extends HeapEntry {
  readonly kind: TaskKind<Subject>;
  /** What the task is for (a held lock). */
  readonly subject: Subject;
}

/** How limited tasks due together may share one slot. */
export interface TaskBatches<Subject> {
  /** Most tasks in one batch now. */
  readonly size: number;
  /** The most `size` ever is: batches in flight hold at most as many tasks as a share of the slots filled with batches this large. */
  readonly largestSize: number;
  /** Whether a due limited task may run now as part of a batch rather than by its kind's `run`. */
  canJoin(task: ScheduledTask<Subject>): boolean;
  /** Runs a batch of two or more tasks, in place of their kind's `run`. */
  run(tasks: readonly ScheduledTask<Subject>[]): Promise<void>;
  /** Longest a due task that could join a batch is held back waiting for a fuller one, in ms. */
  readonly maxWaitMs: number;
}

export interface SchedulerOptions<Subject> {
  readonly clock: MonotonicClock;
  /** Most heartbeats (or batches of them) in flight at once. */
  readonly concurrency: number;
  /** Without it (or with a size of 1) every task runs by itself. */
  readonly batches?: TaskBatches<Subject> | undefined;
  readonly logger?: Logger | undefined;
}

/**
 * Part-full batches are held back while at least this share of the
 * concurrency slots is busy, as Nagle's algorithm holds back small segments:
 * a server nearly keeping up gets fewer, fuller batches.
 */
const PART_FULL_SHARE_OF_CONCURRENCY = 1 / 8;

/**
 * Batches in flight hold at most as many tasks as this share of the
 * concurrency slots filled with batches of the largest size: on DynamoDB
 * Local a client far behind served as many heartbeats with 4 or 8 batches of
 * 25 in flight as with 32, while each batch in flight holds its heartbeats in
 * memory. Smaller batches (a server slow to answer large ones) get as many
 * more slots as keep the same number of tasks in flight.
 */
const BATCH_SHARE_OF_CONCURRENCY = 1 / 4;

/** Timers may fire a fraction of a millisecond before the monotonic clock says the task is due. */
const TIMER_SLACK_MS = 1;

export class DeadlineScheduler<Subject = unknown> {
  /**
   * Limited tasks that may join a batch, by due time, as they were when
   * scheduled. A due one stays here until a slot is free, so the top is
   * always the most overdue: a heartbeat is one removal from this heap,
   * however far behind the client is.
   */
  readonly #joinable = new DeadlineHeap<ScheduledTask<Subject>>();
  /** Limited tasks that may not join a batch: apart, so that batchable tasks held back never hold them back. */
  readonly #lone = new DeadlineHeap<ScheduledTask<Subject>>();
  readonly #unlimited = new DeadlineHeap<ScheduledTask<Subject>>();
  readonly #clock: MonotonicClock;
  readonly #concurrency: number;
  readonly #batches: TaskBatches<Subject> | undefined;
  /** Calls in flight from which a part-full batch waits for company. */
  readonly #partFullLimit: number;
  readonly #batchLimit: number;
  readonly #logger: Logger | undefined;
  #running = 0;
  /** Tasks in the batches in flight. */
  #batchedTasks = 0;
  /** The most overdue task is held back for a fuller batch (and `#running` is at least `#partFullLimit`). */
  #waitingForCompany = false;
  #timer: NodeJS.Timeout | undefined;
  #timerDueAt = Infinity;
  #closed = false;

  constructor(options: SchedulerOptions<Subject>) {
    this.#clock = options.clock;
    this.#concurrency = options.concurrency;
    this.#batches = options.batches !== undefined && options.batches.size > 1 ? options.batches : undefined;
    this.#partFullLimit = Math.max(1, Math.ceil(options.concurrency * PART_FULL_SHARE_OF_CONCURRENCY));
    this.#batchLimit = Math.max(1, Math.ceil(options.concurrency * BATCH_SHARE_OF_CONCURRENCY));
    this.#logger = options.logger;
  }

  createTask(kind: TaskKind<Subject>, subject: Subject): ScheduledTask<Subject> {
    return { dueAt: Infinity, heapIndex: -1, kind, subject };
  }

  /**
   * Runs `task` at `dueAt` on the monotonic clock (rescheduling it if
   * already scheduled). Whether a limited task may join a batch is asked
   * now: a task that goes alone is scheduled as such.
   */
  schedule(task: ScheduledTask<Subject>, dueAt: number): void {
    if (this.#closed) return;
    const heap = this.#heapFor(task);
    for (const other of this.#heaps()) if (other !== heap) other.remove(task);
    heap.upsert(task, dueAt);
    this.#arm();
  }

  /** Takes the task off the schedule; a run already under way finishes. */
  cancel(task: ScheduledTask<Subject>): void {
    for (const heap of this.#heaps()) heap.remove(task);
    this.#arm();
  }

  /** How long the most overdue heartbeat not yet started has been due, in ms; 0 when none waits. */
  overdueMs(): number {
    const dueAt = Math.min(this.#joinable.peek()?.dueAt ?? Infinity, this.#lone.peek()?.dueAt ?? Infinity);
    return dueAt === Infinity ? 0 : Math.max(0, this.#clock.now() - dueAt);
  }

  /** Heartbeats and checks scheduled or running. */
  get size(): number {
    return this.#joinable.size + this.#lone.size + this.#unlimited.size + this.#running;
  }

  close(): void {
    this.#closed = true;
    for (const heap of this.#heaps()) heap.clear();
    this.#disarm();
  }

  #heaps(): readonly DeadlineHeap<ScheduledTask<Subject>>[] {
    return [this.#joinable, this.#lone, this.#unlimited];
  }

  #heapFor(task: ScheduledTask<Subject>): DeadlineHeap<ScheduledTask<Subject>> {
    if (!task.kind.limited) return this.#unlimited;
    return this.#batches?.canJoin(task) === true ? this.#joinable : this.#lone;
  }

  #disarm(): void {
    if (this.#timer !== undefined) clearTimeout(this.#timer);
    this.#timer = undefined;
    this.#timerDueAt = Infinity;
  }

  /** Sets the timer for the next task that could start: limited ones only while a slot is free. */
  #arm(): void {
    const unlimited = this.#unlimited.peek()?.dueAt ?? Infinity;
    const next = Math.min(unlimited, this.#nextLimitedStart());
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

  /**
   * When a limited task could next start: never while every slot is busy;
   * a lone one when due; a batchable one never while every batch slot is
   * busy, and at the end of its wait while it is held back for company. A
   * returning call drains sooner.
   */
  #nextLimitedStart(): number {
    if (this.#running >= this.#concurrency) return Infinity;
    return Math.min(this.#lone.peek()?.dueAt ?? Infinity, this.#nextJoinableStart());
  }

  #nextJoinableStart(): number {
    const top = this.#joinable.peek();
    const batches = this.#batches;
    if (top === undefined) return Infinity;
    if (batches === undefined || !batches.canJoin(top)) return top.dueAt;
    if (this.#batchedTasks >= this.#batchLimit * batches.largestSize) return Infinity;
    return this.#waitingForCompany ? top.dueAt + batches.maxWaitMs : top.dueAt;
  }

  /**
   * Starts due heartbeats, most overdue first, while slots are free. A due
   * batchable task takes the due batchable tasks right behind it into its
   * slot, up to the batch size: the more the client is behind, the fuller
   * its batches. Batchable tasks held back (every batch slot busy, or
   * waiting for company) wait together; lone tasks go on past them.
   */
  #drain(): void {
    const now = this.#clock.now();
    const isDue = (task: ScheduledTask<Subject> | undefined): task is ScheduledTask<Subject> =>
      task !== undefined && task.dueAt - now < TIMER_SLACK_MS;
    const batches = this.#batches;
    this.#waitingForCompany = false;
    let joinableHeldBack = false;
    while (this.#running < this.#concurrency) {
      const lone = this.#lone.peek();
      const joinable = joinableHeldBack ? undefined : this.#joinable.peek();
      const task = isDue(lone) && (!isDue(joinable) || lone.dueAt < joinable.dueAt) ? lone : joinable;
      if (!isDue(task)) return;
      if (task === lone || batches === undefined || !batches.canJoin(task)) {
        (task === lone ? this.#lone : this.#joinable).remove(task);
        void this.#execute(task);
        continue;
      }
      if (this.#batchedTasks >= this.#batchLimit * batches.largestSize) {
        joinableHeldBack = true;
        continue;
      }
      if (this.#shouldWaitForCompany(batches, task, now)) {
        this.#waitingForCompany = true;
        joinableHeldBack = true;
        continue;
      }
      this.#joinable.remove(task);
      const batch = [task];
      for (let next = this.#joinable.peek(); batch.length < batches.size && isDue(next) && batches.canJoin(next); next = this.#joinable.peek()) {
        this.#joinable.remove(next);
        batch.push(next);
      }
      void (batch.length === 1 ? this.#execute(task) : this.#executeBatch(batches, batch));
    }
  }

  /** Whether the due batchable task `first` should wait for a fuller batch (see the module comment). */
  #shouldWaitForCompany(batches: TaskBatches<Subject>, first: ScheduledTask<Subject>, now: number): boolean {
    return (
      this.#running >= this.#partFullLimit &&
      first.dueAt + batches.maxWaitMs - now >= TIMER_SLACK_MS &&
      this.#joinable.countDueBefore(now + TIMER_SLACK_MS, batches.size) < batches.size
    );
  }

  async #executeBatch(batches: TaskBatches<Subject>, batch: ScheduledTask<Subject>[]): Promise<void> {
    this.#running++;
    this.#batchedTasks += batch.length;
    try {
      await batches.run(batch);
    } catch (error) {
      this.#logger?.error({ err: error }, 'lock scheduler batch failed');
    } finally {
      this.#running--;
      this.#batchedTasks -= batch.length;
      this.#drain();
      this.#arm();
    }
  }

  async #execute(task: ScheduledTask<Subject>): Promise<void> {
    const { limited } = task.kind;
    if (limited) this.#running++;
    try {
      await task.kind.run(task.subject);
    } catch (error) {
      // Tasks handle their own failures; this only keeps the loop alive if one does not.
      this.#logger?.error({ err: error }, 'lock scheduler task failed');
    } finally {
      if (limited) {
        this.#running--;
        this.#drain();
        this.#arm();
      }
    }
  }
}
