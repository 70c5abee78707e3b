/**
 * Keeps held locks alive on the client's one scheduler, which it owns. Each
 * lock has up to three tasks in the scheduler's heap, never a timer of its
 * own:
 *
 * - heartbeat: one heartbeat period after the lock's last confirmed write
 *   (the first one a little early at random, so locks taken together drift
 *   apart for good); transient failures are retried with backoff while the
 *   lease is still safe, and a lock whose safe time has become shorter than
 *   a heartbeat takes is given up rather than heartbeated. Heartbeats due
 *   together may go out as one batch; a lock whose batched heartbeat failed
 *   retries on its own;
 * - expiry: the moment the lease minus the safety margin has passed since
 *   the last confirmed write, when the lock must be given up;
 * - session check: Java's session monitor (`safeTimeWithoutHeartbeat`).
 *
 * It writes through the one heartbeat writer and acts on what it reports;
 * the lock's state changes on the lock itself.
 */
import pRetry from 'p-retry';
import type { MonotonicClock } from '../base/clock.js';
import { isTransient } from '../dynamodb/sdk-errors.js';
import type { TypedEvents } from '../base/events.js';
import { RoundTripEstimate } from './round-trip-estimate.js';
import { DeadlineScheduler, type ScheduledTask, type TaskKind } from './deadline-scheduler.js';
import { SharedDeadlines } from './shared-deadlines.js';
import { BATCH_WAIT_SHARE_OF_PERIOD, FIRST_HEARTBEAT_JITTER, firstRetryBackoffMs, pauseAfterFailedRunMs } from './heartbeat-tuning.js';
import type { Logger } from '../base/logger.js';
import { abortableSleep } from '../primitives/abortable-sleep.js';
import { HeartbeatBatchPace } from './heartbeat-batch-pace.js';
import type { HeartbeatResult, HeartbeatWriter } from './heartbeat-writer.js';
import type { HeldLock } from '../hold/held-lock.js';
import type { HoldEvents } from './hold-events.js';
import { Keepings } from './keeping.js';
import { tooLateToHeartbeat } from '../hold/loss.js';

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

/** Retries after a failed first attempt; `maxRetryTime` usually ends them sooner. */
const RETRIES = 7;

export class LockKeeper {
  readonly #options: LockKeeperOptions;
  readonly #scheduler: DeadlineScheduler<HeldLock>;
  readonly #keepings = new Keepings();
  readonly #random: () => number;
  readonly #roundTrip: RoundTripEstimate;
  /** Apart from single heartbeats: a batch takes longer, and would make a lone heartbeat look slower than it is. */
  readonly #batchPace: HeartbeatBatchPace;
  readonly #deadlines: SharedDeadlines;
  readonly #heartbeat: TaskKind<HeldLock> = { limited: true, run: (held) => this.#beat(held) };
  readonly #expiry: TaskKind<HeldLock> = { limited: false, run: (held) => this.#checkExpiry(held) };
  readonly #session: TaskKind<HeldLock> = { limited: false, run: (held) => this.#checkSession(held) };

  constructor(options: LockKeeperOptions) {
    this.#options = options;
    this.#deadlines = new SharedDeadlines(options.clock);
    this.#random = options.random ?? Math.random;
    // An attempt gets a period at most: a longer wait says nothing of the server.
    this.#roundTrip = new RoundTripEstimate(options.heartbeatPeriod);
    const pace = (this.#batchPace = new HeartbeatBatchPace(options.heartbeatBatchSize, options.heartbeatPeriod, options.clock));
    this.#scheduler = new DeadlineScheduler<HeldLock>({
      clock: options.clock,
      concurrency: options.heartbeatConcurrency,
      batches: {
        get size() {
          return pace.size;
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
    this.#scheduleHeartbeat(held, { jitter: true });
    scheduler.schedule(keeping.expiry, held.safeUntil());
    this.kept(held);
  }

  /** A write of the lock was confirmed: a new episode without failures, and its deadlines move. */
  confirmed(held: HeldLock): void {
    const keeping = this.#keepings.kept(held);
    if (keeping === undefined) return;
    keeping.endangered = false;
    this.kept(held);
  }

  /** Its `lookupTime` moved (a confirmed write, or Java's `holdLockOnServiceUnavailable`): move its deadlines. */
  kept(held: HeldLock): void {
    const keeping = this.#keepings.kept(held);
    if (keeping === undefined) return;
    // The expiry check moves itself on when it finds the lock renewed, so a heartbeat only has to
    // move it when the safe time got shorter (a shorter lease); otherwise every heartbeat would
    // pay for a second move in the scheduler's heap.
    this.safeTimeChanged(held);
    const monitor = held.sessionMonitor;
    if (keeping.session !== undefined && monitor !== undefined) {
      keeping.sessionFired = false;
      this.#scheduler.schedule(keeping.session, held.lookupTime + monitor.safeTimeWithoutHeartbeat);
    }
  }

  /** A write of unknown outcome may have shortened the lock's safe time (it wrote a shorter lease): bring its expiry forward if so. */
  safeTimeChanged(held: HeldLock): void {
    const expiry = this.#keepings.kept(held)?.expiry;
    if (expiry !== undefined && held.safeUntil() < expiry.dueAt) this.#scheduler.schedule(expiry, held.safeUntil());
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

  /**
   * Jitter only once per lock: a later heartbeat follows its own lock's last
   * confirmed write, so the spread stays, and an early heartbeat every period
   * would only add load.
   */
  #scheduleHeartbeat(held: HeldLock, when: { jitter?: boolean; retryAt?: number }): void {
    const task = this.#keepings.kept(held)?.heartbeat;
    if (task === undefined) return;
    const period = this.#options.heartbeatPeriod;
    const early = when.jitter === true ? FIRST_HEARTBEAT_JITTER * this.#random() : 0;
    this.#scheduler.schedule(task, when.retryAt ?? held.lookupTime + period * (1 - early));
  }

  async #beat(held: HeldLock): Promise<void> {
    const keeping = this.#keepings.kept(held);
    if (keeping === undefined) return;
    const { clock, heartbeatPeriod } = this.#options;
    const lagMs = Math.max(0, clock.now() - (keeping.heartbeat?.dueAt ?? clock.now()));
    let failed = false;
    try {
      // Most heartbeats succeed at once: only a failed first attempt pays for p-retry's machinery.
      try {
        await this.#attempt(held);
      } catch (error) {
        const willRetry = this.#shouldRetry(held, error);
        this.#failed(held, error, willRetry);
        if (!willRetry) throw error;
        // The backoff p-retry would have waited before its first retry (randomized 1-2×); p-retry
        // itself starts with an attempt, so its own delays start one step further.
        const firstBackoff = firstRetryBackoffMs(heartbeatPeriod);
        await abortableSleep(firstBackoff * (1 + this.#random()), held.signal, { unref: true });
        await pRetry(() => this.#attempt(held), {
          retries: RETRIES,
          factor: 2,
          minTimeout: 2 * firstBackoff,
          maxTimeout: heartbeatPeriod / 2,
          randomize: true,
          // Give the concurrency slot back within about a period; the next run starts over.
          maxRetryTime: Math.max(0, Math.min(heartbeatPeriod, held.safeTimeLeft())),
          signal: held.signal,
          unref: true,
          shouldRetry: ({ error: retryError }) => this.#shouldRetry(held, retryError),
          onFailedAttempt: ({ error: attemptError, retriesLeft }) =>
            this.#failed(held, attemptError, retriesLeft > 0 && this.#shouldRetry(held, attemptError)),
        });
      }
      this.#options.events.emit('heartbeat', { held, lagMs });
    } catch (error) {
      failed = true;
      this.#options.logger?.debug({ err: error, partitionKey: held.partitionKey }, 'background heartbeat failed');
    }
    keeping.retriesAlone = false;
    if (this.#keepings.kept(held) === undefined) return;
    // After a failed run, try again soon (not in a tight loop); the expiry task ends it if it is too late.
    this.#scheduleHeartbeat(held, failed ? { retryAt: clock.now() + pauseAfterFailedRunMs(heartbeatPeriod) } : {});
  }

  /** Whether a due heartbeat may go out in a batch: not while another write of the lock is under way or after a failed batch. */
  #canBatch(held: HeldLock): boolean {
    const keeping = this.#keepings.kept(held);
    return keeping !== undefined && !keeping.retriesAlone && !held.writing && this.#options.writer.batching;
  }

  /**
   * The heartbeats of several due locks in one request (the scheduler's
   * batch, one concurrency slot). A lock whose heartbeat failed in it
   * retries on its own, with `#beat`'s backoff.
   */
  async #beatBatch(tasks: readonly ScheduledTask<HeldLock>[]): Promise<void> {
    const { clock, heartbeatPeriod, writer } = this.#options;
    const startedAt = clock.now();
    const roundTrip = this.#batchPace.roundTripMs();
    const batch: { held: HeldLock; lagMs: number }[] = [];
    let safeFor = heartbeatPeriod;
    for (const task of tasks) {
      const held = task.subject;
      if (this.#keepings.kept(held) === undefined) continue;
      const safe = held.safeTimeLeft();
      if (safe < roundTrip) {
        held.lose('expired', tooLateToHeartbeat(safe, roundTrip));
        continue;
      }
      batch.push({ held, lagMs: Math.max(0, startedAt - task.dueAt) });
      safeFor = Math.min(safeFor, safe);
    }
    const [first, ...others] = batch;
    if (first === undefined) return;
    // The others were given up: what is left goes as a lone heartbeat does, Java's UpdateItem.
    if (others.length === 0) return this.#beat(first.held);
    const attempt = this.#deadlines.deadline(safeFor);
    let results: HeartbeatResult[];
    try {
      results = await writer.writeBatch(
        batch.map(({ held }) => held),
        attempt.signal,
      );
    } catch (error) {
      // Not expected; but a lock left without a scheduled heartbeat would only ever expire.
      results = batch.map(() => ({ outcome: 'failed', error }));
    } finally {
      attempt.clear();
    }
    // Only an answered batch tells how long a heartbeat takes; a failed one may have waited out its whole deadline.
    if (results.some((result) => result.outcome === 'confirmed' || result.outcome === 'kept')) {
      this.#batchPace.answered(batch.length, clock.now() - startedAt, this.#scheduler.overdueMs());
    } else if (attempt.signal.aborted) {
      this.#batchPace.unanswered(batch.length);
    }
    batch.forEach(({ held, lagMs }, i) => {
      const result = results[i];
      if (result?.outcome === 'confirmed' || result?.outcome === 'kept') {
        if (result.outcome === 'confirmed') this.confirmed(held);
        else this.kept(held);
        this.#options.events.emit('heartbeat', { held, lagMs });
        this.#scheduleHeartbeat(held, {});
        return;
      }
      this.safeTimeChanged(held);
      const keeping = this.#keepings.kept(held);
      if (keeping === undefined) return;
      keeping.retriesAlone = true;
      if (result === undefined || result.outcome !== 'failed') {
        // Not sent (or, past the end of the results, not known to be): on its own at once, still as overdue as it was.
        this.#scheduleHeartbeat(held, { retryAt: startedAt - lagMs });
        return;
      }
      const willRetry = this.#shouldRetry(held, result.error);
      this.#failed(held, result.error, willRetry);
      const pause = willRetry ? firstRetryBackoffMs(heartbeatPeriod) * (1 + this.#random()) : pauseAfterFailedRunMs(heartbeatPeriod);
      this.#scheduleHeartbeat(held, { retryAt: clock.now() + pause });
    });
  }

  /** One heartbeat request, bounded by a period and by what is left of the safe time; throws unless confirmed. */
  async #attempt(held: HeldLock): Promise<void> {
    const { clock, heartbeatPeriod, writer } = this.#options;
    const safeFor = held.safeTimeLeft();
    const roundTrip = this.#roundTrip.estimate();
    if (safeFor < roundTrip) throw held.lose('expired', tooLateToHeartbeat(safeFor, roundTrip));
    // A period at most, so that a request stuck on a dead connection leaves time for a retry.
    const attempt = this.#deadlines.deadline(Math.min(heartbeatPeriod, safeFor));
    const sentAt = clock.now();
    let result: HeartbeatResult;
    try {
      result = await writer.write(held, {}, attempt.signal);
    } finally {
      attempt.clear();
    }
    if (result.outcome === 'confirmed' || result.outcome === 'kept') {
      this.#roundTrip.add(clock.now() - sentAt);
      if (result.outcome === 'confirmed') this.confirmed(held);
      else this.kept(held);
      return;
    }
    this.safeTimeChanged(held);
    if (result.outcome === 'failed' || result.outcome === 'lost') throw result.error;
  }

  #shouldRetry(held: HeldLock, error: unknown): boolean {
    return isTransient(error) && this.#keepings.kept(held) !== undefined && held.safeTimeLeft() > 0;
  }

  /** A background heartbeat attempt failed; a heartbeat cut short by the lock's end is no news to anyone. */
  #failed(held: HeldLock, error: unknown, willRetry: boolean): void {
    const keeping = this.#keepings.kept(held);
    if (keeping === undefined) return;
    const { events, logger } = this.#options;
    logger?.warn({ err: error, partitionKey: held.partitionKey, sortKey: held.sortKey, willRetry }, 'heartbeat failed');
    events.emit('heartbeatError', { held, error, willRetry });
    if (!keeping.endangered) {
      keeping.endangered = true;
      events.emit('endangered', { held, error, msUntilLost: held.safeTimeLeft() });
    }
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
