/**
 * Keeps held locks alive on the client's one scheduler, which it owns. Each
 * lock has up to three tasks in the scheduler's heap, never a timer of its
 * own:
 *
 * - heartbeat: one heartbeat period after the lock's last confirmed write
 *   (the first one a little early at random, so locks taken together drift
 *   apart for good), alone or in a batch of heartbeats due together
 *   (heartbeat-attempts.ts); after a failed attempt, the next one, alone,
 *   after a backoff, while the safe time lasts;
 * - expiry: the moment the lease minus the safety margin has passed since
 *   the last confirmed write, when the lock must be given up;
 * - session check: Java's session monitor (`safeTimeWithoutHeartbeat`).
 *
 * Every heartbeat's result, background or manual, alone or batched, is acted
 * on in one place here ({@link LockKeeper.#settle}); the lock's state
 * changes on the lock itself.
 */
import type { MonotonicClock } from '../base/clock.js';
import { isTransient } from '../dynamodb/sdk-errors.js';
import type { TypedEvents } from '../base/events.js';
import { DeadlineScheduler, type ScheduledTask, type TaskKind } from './deadline-scheduler.js';
import { BATCH_WAIT_SHARE_OF_PERIOD, FIRST_HEARTBEAT_JITTER, retryBackoffMs } from './heartbeat-tuning.js';
import type { Logger } from '../base/logger.js';
import { deadline } from '../primitives/deadline.js';
import { HeartbeatAttempts } from './heartbeat-attempts.js';
import type { HeartbeatChange, HeartbeatResult, HeartbeatWriter } from './heartbeat-writer.js';
import type { HeldLock } from '../hold/held-lock.js';
import type { HoldEvents } from './hold-events.js';
import { Keepings, type Keeping } from './keeping.js';

export interface LockKeeperOptions {
  readonly writer: HeartbeatWriter;
  readonly events: TypedEvents<HoldEvents>;
  readonly clock: MonotonicClock;
  readonly heartbeatPeriod: number;
  /** Most heartbeats (or batches) in flight at once. */
  readonly heartbeatConcurrency: number;
  readonly heartbeatBatchSize: number;
  /** When false, only expiry and session checks are scheduled; the caller heartbeats. */
  readonly backgroundHeartbeats: boolean;
  readonly logger?: Logger | undefined;
  /** In [0, 1); replace only in tests. @default Math.random */
  readonly random?: () => number;
}

/** Where a background heartbeat's result came from: when it was due, and how late it started. */
interface Due {
  readonly dueAt: number;
  readonly lagMs: number;
}

export class LockKeeper {
  readonly #options: LockKeeperOptions;
  readonly #scheduler: DeadlineScheduler<HeldLock>;
  readonly #attempts: HeartbeatAttempts;
  readonly #keepings = new Keepings();
  readonly #random: () => number;
  readonly #heartbeat: TaskKind<HeldLock> = { limited: true, run: (held) => this.#beat(held) };
  readonly #expiry: TaskKind<HeldLock> = { limited: false, run: (held) => this.#checkExpiry(held) };
  readonly #session: TaskKind<HeldLock> = { limited: false, run: (held) => this.#checkSession(held) };

  constructor(options: LockKeeperOptions) {
    this.#options = options;
    this.#random = options.random ?? Math.random;
    const attempts = (this.#attempts = new HeartbeatAttempts({ ...options, overdueMs: () => this.overdueMs() }));
    this.#scheduler = new DeadlineScheduler<HeldLock>({
      clock: options.clock,
      concurrency: options.heartbeatConcurrency,
      batches: {
        get size() {
          return attempts.batchSize;
        },
        canJoin: (task) => this.#canBatch(task.subject),
        run: (tasks) => this.#beatBatch(tasks),
        maxWaitMs: options.heartbeatPeriod * BATCH_WAIT_SHARE_OF_PERIOD,
        largestSize: options.heartbeatBatchSize,
      },
      logger: options.logger,
    });
  }

  /** How long the most overdue heartbeat not yet sent has waited, in ms. */
  overdueMs(): number {
    return this.#scheduler.overdueMs();
  }

  /** Starts keeping a lock that was just acquired. */
  track(held: HeldLock): void {
    const scheduler = this.#scheduler;
    const keeping = this.#keepings.of(held, () => ({
      heartbeat: this.#options.backgroundHeartbeats ? scheduler.createTask(this.#heartbeat, held) : undefined,
      expiry: scheduler.createTask(this.#expiry, held),
      session: held.sessionMonitor === undefined ? undefined : scheduler.createTask(this.#session, held),
    }));
    this.#scheduleHeartbeat(keeping, held, held.lookupTime + this.#options.heartbeatPeriod * (1 - FIRST_HEARTBEAT_JITTER * this.#random()));
    scheduler.schedule(keeping.expiry, held.safeUntil());
    this.#moveDeadlines(keeping, held);
  }

  /** Stops every task of the lock. A heartbeat already in flight finishes. */
  untrack(held: HeldLock): void {
    const keeping = this.#keepings.any(held);
    for (const task of [keeping?.heartbeat, keeping?.expiry, keeping?.session]) {
      if (task !== undefined) this.#scheduler.cancel(task);
    }
  }

  /** Stops every task for good. */
  close(): void {
    this.#scheduler.close();
  }

  /** A heartbeat the caller sends (`lock.sendHeartbeat`), bounded by what is left of the safe time; throws unless confirmed. */
  async sendHeartbeat(held: HeldLock, change: HeartbeatChange): Promise<void> {
    const attempt = deadline(held.safeTimeLeft());
    let result: HeartbeatResult;
    try {
      result = await this.#options.writer.write(held, change, attempt.signal);
    } finally {
      attempt.clear();
    }
    this.#settle(held, result);
    if (result.outcome === 'failed' || result.outcome === 'lost') throw result.error;
  }

  /**
   * A lock's next heartbeat: one period after its last confirmed write.
   * Only the first is jittered (in `track`): later ones follow their own
   * lock's writes, so the spread stays, and an early heartbeat every period
   * would only add load.
   */
  #scheduleHeartbeat(keeping: Keeping, held: HeldLock, at = held.lookupTime + this.#options.heartbeatPeriod): void {
    if (keeping.heartbeat !== undefined) this.#scheduler.schedule(keeping.heartbeat, at);
  }

  async #beat(held: HeldLock): Promise<void> {
    const task = this.#keepings.kept(held)?.heartbeat;
    if (task === undefined) return;
    const lagMs = Math.max(0, this.#options.clock.now() - task.dueAt);
    this.#settle(held, await this.#attempts.single(held), { dueAt: task.dueAt, lagMs });
  }

  /**
   * Whether a due heartbeat may go out in a batch: not while another write
   * of the lock is under way, nor as a retry, nor for a lock bounded by its
   * holder's end, whose lease is stated again as each attempt leaves
   * (dynamodb/lease-restatement.ts), which a batch's statements are not.
   */
  #canBatch(held: HeldLock): boolean {
    const keeping = this.#keepings.kept(held);
    return keeping !== undefined && !keeping.alone && !held.writing && held.leaseEnd === undefined && this.#options.writer.batching;
  }

  /** The heartbeats of several due locks in one request (the scheduler's batch, one concurrency slot). */
  async #beatBatch(tasks: readonly ScheduledTask<HeldLock>[]): Promise<void> {
    const startedAt = this.#options.clock.now();
    const kept = tasks.filter((task) => this.#keepings.kept(task.subject) !== undefined);
    const results = await this.#attempts.batch(kept.map((task) => task.subject));
    kept.forEach(({ subject, dueAt }, i) => {
      this.#settle(subject, results[i] ?? { outcome: 'unbatchable' }, { dueAt, lagMs: Math.max(0, startedAt - dueAt) });
    });
  }

  /**
   * The one place a heartbeat's result is acted on, background (`due`) or
   * manual, alone or batched: a confirmed write moves the lock's deadlines
   * and ends an episode of failures; a write of unknown outcome may have
   * shortened its safe time; and a background heartbeat's next attempt is
   * scheduled: a period after the confirmed write, or soon after a failure.
   */
  #settle(held: HeldLock, result: HeartbeatResult, due?: Due): void {
    const keeping = this.#keepings.kept(held);
    if (keeping === undefined) return; // ended, or a release began: the lock's own end path untracked it
    const { events, heartbeatPeriod, clock } = this.#options;
    switch (result.outcome) {
      case 'confirmed':
      case 'kept':
        // Java's holdLockOnServiceUnavailable keeps a lock without a confirmed write: no end to an episode of failures.
        if (result.outcome === 'confirmed') keeping.failures = 0;
        keeping.alone = false;
        this.#moveDeadlines(keeping, held);
        if (due === undefined) return;
        events.emit('heartbeat', { held, lagMs: due.lagMs });
        this.#scheduleHeartbeat(keeping, held);
        return;
      case 'unbatchable':
        // Not sent in a batch (the table refuses them, or too little safe time for one): alone at once, as overdue as it was.
        keeping.alone = true;
        if (due !== undefined) this.#scheduleHeartbeat(keeping, held, due.dueAt);
        return;
      case 'lost':
        return;
      case 'failed': {
        this.#moveExpiry(keeping, held);
        if (due === undefined) return;
        keeping.alone = true;
        const safeTimeLeft = held.safeTimeLeft();
        const transient = isTransient(result.error) && safeTimeLeft > 0;
        this.#failed(keeping, held, result.error, transient);
        const failure = { failures: keeping.failures, transient, random: this.#random() };
        const backoff = retryBackoffMs(heartbeatPeriod, failure, safeTimeLeft, this.#attempts.slowRoundTripMs());
        this.#scheduleHeartbeat(keeping, held, clock.now() + backoff);
      }
    }
  }

  /** A write of the lock was confirmed (or kept by Java's `holdLockOnServiceUnavailable`): its deadlines move. */
  #moveDeadlines(keeping: Keeping, held: HeldLock): void {
    this.#moveExpiry(keeping, held);
    const monitor = held.sessionMonitor;
    if (keeping.session !== undefined && monitor !== undefined) {
      keeping.sessionFired = false;
      this.#scheduler.schedule(keeping.session, held.lookupTime + monitor.safeTimeWithoutHeartbeat);
    }
  }

  /**
   * Brings the expiry forward when the safe time got shorter (a shorter
   * lease confirmed, or one in doubt). The expiry check moves itself on when
   * it finds the lock renewed, so that a heartbeat does not pay for a second
   * move in the scheduler's heap.
   */
  #moveExpiry(keeping: Keeping, held: HeldLock): void {
    if (held.safeUntil() < keeping.expiry.dueAt) this.#scheduler.schedule(keeping.expiry, held.safeUntil());
  }

  /** A background heartbeat attempt failed: told to listeners, and `endangered` once per episode of failures. */
  #failed(keeping: Keeping, held: HeldLock, error: unknown, willRetry: boolean): void {
    const { events, logger } = this.#options;
    logger?.warn({ err: error, partitionKey: held.partitionKey, sortKey: held.sortKey, willRetry }, 'heartbeat failed');
    events.emit('heartbeatError', { held, error, willRetry });
    if (keeping.failures++ === 0) events.emit('endangered', { held, error, msUntilLost: held.safeTimeLeft() });
  }

  #checkExpiry(held: HeldLock): void {
    const expiry = this.#keepings.kept(held)?.expiry;
    if (expiry === undefined) return;
    const left = held.safeTimeLeft();
    if (left > 0) this.#scheduler.schedule(expiry, this.#options.clock.now() + left);
    else held.expire();
  }

  #checkSession(held: HeldLock): void {
    const monitor = held.sessionMonitor;
    const keeping = this.#keepings.kept(held);
    if (monitor === undefined || keeping?.session === undefined || keeping.sessionFired) return;
    const dueAt = held.lookupTime + monitor.safeTimeWithoutHeartbeat;
    if (this.#options.clock.now() < dueAt) {
      this.#scheduler.schedule(keeping.session, dueAt);
      return;
    }
    keeping.sessionFired = true;
    try {
      monitor.callback?.();
    } catch (error) {
      this.#options.logger?.error({ err: error, partitionKey: held.partitionKey }, 'session monitor callback threw');
    }
  }
}
