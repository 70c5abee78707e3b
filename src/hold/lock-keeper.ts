/**
 * Keeps held locks alive on the client's one scheduler. Each lock has up to
 * three tasks in the scheduler's heap, never a timer of its own:
 *
 * - heartbeat: one heartbeat period after the lock's last confirmed write
 *   (the first one up to 10 % early at random, so locks taken together drift
 *   apart for good); transient failures are retried with backoff while the
 *   lease is still safe, and a lock whose safe time has become shorter than
 *   a heartbeat takes is given up rather than heartbeated. Heartbeats due
 *   together may go out as one batch (`beatBatch`); a lock whose batched
 *   heartbeat failed retries on its own;
 * - expiry: the moment the lease minus the safety margin has passed since
 *   the last confirmed write, when the lock must be given up;
 * - session check: Java's session monitor (`safeTimeWithoutHeartbeat`).
 */
import pRetry from 'p-retry';
import type { Logger } from '../logger.js';
import { abortableSleep } from '../primitives/abortable-sleep.js';
import type { MonotonicClock } from '../clock.js';
import { isTransient } from '../dynamodb/sdk-errors.js';
import type { HeldLock } from './held-lock.js';
import { RoundTripEstimate } from '../heartbeat/round-trip-estimate.js';
import type { HeartbeatScheduler, ScheduledTask, TaskKind } from '../heartbeat/scheduler.js';
import { SharedDeadlines } from '../heartbeat/shared-deadlines.js';

/**
 * How one lock's heartbeat in a batch ended: confirmed, failed (`error`), or
 * not sent because batches cannot be used (send it on its own).
 */
export type BatchHeartbeatOutcome = 'confirmed' | 'unbatchable' | { readonly error: unknown };

export interface KeeperHooks {
  /** Sends one heartbeat; `deadline` aborts it once the lease is no longer safe. Throws on failure. */
  heartbeat(held: HeldLock, deadline: AbortSignal): Promise<void>;
  /** Sends the heartbeats of several locks in one call; never throws. */
  heartbeatBatch(helds: readonly HeldLock[], deadline: AbortSignal): Promise<BatchHeartbeatOutcome[]>;
  /** Whether heartbeats may be batched at all (false once the table has refused a batch). */
  batchingAvailable(): boolean;
  /** The lease minus the safety margin has passed without a confirmed heartbeat. */
  expire(held: HeldLock): void;
  /** The lock cannot be kept (`reason` says why); returns the error it was ended with. */
  giveUp(held: HeldLock, reason: string): Error;
  /** A background heartbeat attempt failed. */
  heartbeatFailed(held: HeldLock, error: unknown, willRetry: boolean): void;
  /** A background heartbeat was confirmed `lagMs` after it was due. */
  heartbeatConfirmed(held: HeldLock, lagMs: number): void;
}

export interface LockKeeperOptions {
  readonly scheduler: HeartbeatScheduler<HeldLock>;
  readonly clock: MonotonicClock;
  readonly heartbeatPeriod: number;
  /** When false, only expiry and session checks are scheduled; the caller heartbeats. */
  readonly backgroundHeartbeats: boolean;
  readonly hooks: KeeperHooks;
  readonly logger?: Logger | undefined;
  /** In [0, 1); replace only in tests. @default Math.random */
  readonly random?: () => number;
}

/**
 * Under overload a lock can reach the front of the queue with less safe time
 * than a request takes: its write would most likely be cut off unconfirmed,
 * and only take server capacity from locks that can still be kept. It is
 * given up then, while its holder can still be told in time.
 */
function tooLateReason(safeFor: number, roundTrip: number): string {
  return `its heartbeat could not be sent in time: ${Math.max(0, Math.round(safeFor))} ms of safe time were left, and a heartbeat takes about ${Math.round(roundTrip)} ms`;
}

/** A lock's first heartbeat is due up to this fraction of a period early, never late. */
const JITTER = 0.1;
/** Retries after a failed first attempt; `maxRetryTime` usually ends them sooner. */
const RETRIES = 7;

export class LockKeeper {
  readonly #options: LockKeeperOptions;
  readonly #random: () => number;
  readonly #roundTrip = new RoundTripEstimate();
  /** Apart from single heartbeats: a batch takes longer, and would make a lone heartbeat look slower than it is. */
  readonly #batchRoundTrip = new RoundTripEstimate();
  readonly #deadlines: SharedDeadlines;
  readonly #heartbeat: TaskKind<HeldLock> = { limited: true, run: (held) => this.#beat(held) };
  readonly #expiry: TaskKind<HeldLock> = { limited: false, run: (held) => this.#checkExpiry(held) };
  readonly #session: TaskKind<HeldLock> = { limited: false, run: (held) => this.#checkSession(held) };

  constructor(options: LockKeeperOptions) {
    this.#options = options;
    this.#deadlines = new SharedDeadlines(options.clock);
    this.#random = options.random ?? Math.random;
  }

  /** Starts keeping a lock that was just acquired (or is held again). */
  track(held: HeldLock): void {
    const { scheduler, backgroundHeartbeats } = this.#options;
    if (backgroundHeartbeats) {
      held.heartbeatTask ??= scheduler.createTask(this.#heartbeat, held);
      this.#scheduleHeartbeat(held, { jitter: true });
    }
    held.expiryTask ??= scheduler.createTask(this.#expiry, held);
    scheduler.schedule(held.expiryTask, held.safeUntil());
    if (held.sessionMonitor !== undefined) {
      held.monitorTask ??= scheduler.createTask(this.#session, held);
    }
    this.confirmed(held);
  }

  /** A write of the lock was confirmed (its `lookupTime` moved): move its deadlines. */
  confirmed(held: HeldLock): void {
    if (held.state !== 'held') return;
    const { scheduler } = this.#options;
    // The expiry check moves itself on when it finds the lock renewed, so a heartbeat only has to
    // move it when the safe time got shorter (a shorter lease); otherwise every heartbeat would
    // pay for a second move in the scheduler's heap.
    const expiry = held.expiryTask;
    if (expiry !== undefined && held.safeUntil() < expiry.dueAt) scheduler.schedule(expiry, held.safeUntil());
    const monitor = held.sessionMonitor;
    if (held.monitorTask !== undefined && monitor !== undefined) {
      monitor.fired = false;
      scheduler.schedule(held.monitorTask, held.lookupTime + monitor.safeTimeWithoutHeartbeat);
    }
  }

  /**
   * A write of unknown outcome may have shortened the lock's safe time (it
   * wrote a shorter lease): bring its expiry forward if so.
   */
  safeTimeChanged(held: HeldLock): void {
    const expiry = held.expiryTask;
    if (held.state === 'held' && expiry !== undefined && held.safeUntil() < expiry.dueAt) {
      this.#options.scheduler.schedule(expiry, held.safeUntil());
    }
  }

  /** Stops every task of the lock. A heartbeat already in flight finishes. */
  untrack(held: HeldLock): void {
    const { scheduler } = this.#options;
    for (const task of [held.heartbeatTask, held.expiryTask, held.monitorTask]) {
      if (task !== undefined) scheduler.cancel(task);
    }
  }

  /**
   * Jitter only once per lock: a later heartbeat follows its own lock's last
   * confirmed write, so the spread stays, and an early heartbeat every period
   * would only add load.
   */
  #scheduleHeartbeat(held: HeldLock, when: { jitter?: boolean; retryAt?: number }): void {
    if (held.heartbeatTask === undefined || held.state !== 'held') return;
    const period = this.#options.heartbeatPeriod;
    const early = when.jitter === true ? JITTER * this.#random() : 0;
    const dueAt = when.retryAt ?? held.lookupTime + period * (1 - early);
    this.#options.scheduler.schedule(held.heartbeatTask, dueAt);
  }

  async #beat(held: HeldLock): Promise<void> {
    if (held.state !== 'held') return;
    const { clock, hooks, heartbeatPeriod } = this.#options;
    const lagMs = Math.max(0, clock.now() - (held.heartbeatTask?.dueAt ?? clock.now()));
    let failed = false;
    try {
      // Most heartbeats succeed at once: only a failed first attempt pays for p-retry's machinery.
      try {
        await this.#attempt(held);
      } catch (error) {
        const willRetry = this.#shouldRetry(held, error);
        hooks.heartbeatFailed(held, error, willRetry);
        if (!willRetry) throw error;
        // The backoff p-retry would have waited before its first retry (randomized 1-2×); p-retry
        // itself starts with an attempt, so its own delays start one step further.
        const firstBackoff = this.#firstBackoff();
        await abortableSleep(firstBackoff * (1 + this.#random()), held.signal, { unref: true });
        await pRetry(() => this.#attempt(held), {
          retries: RETRIES,
          factor: 2,
          minTimeout: 2 * firstBackoff,
          maxTimeout: heartbeatPeriod / 2,
          randomize: true,
          // Give the concurrency slot back within about a period; the next run starts over.
          maxRetryTime: Math.max(0, Math.min(heartbeatPeriod, this.#safeFor(held))),
          signal: held.signal,
          unref: true,
          shouldRetry: ({ error: retryError }) => this.#shouldRetry(held, retryError),
          onFailedAttempt: ({ error: attemptError, retriesLeft }) =>
            hooks.heartbeatFailed(held, attemptError, retriesLeft > 0 && this.#shouldRetry(held, attemptError)),
        });
      }
      hooks.heartbeatConfirmed(held, lagMs);
    } catch (error) {
      failed = true;
      this.#options.logger?.debug({ err: error, partitionKey: held.partitionKey }, 'background heartbeat failed');
    }
    held.retriesAlone = false;
    if (held.state !== 'held') return;
    // After a failed run, try again soon (not in a tight loop); the expiry task ends it if it is too late.
    this.#scheduleHeartbeat(held, failed ? { retryAt: clock.now() + this.#pauseAfterFailedRun() } : {});
  }

  /** Whether a due heartbeat may go out in a batch: not while another write of the lock is under way or after a failed batch. */
  canBatch(task: ScheduledTask<HeldLock>): boolean {
    const held = task.subject;
    return held.state === 'held' && !held.retriesAlone && !held.writing && this.#options.hooks.batchingAvailable();
  }

  /**
   * The heartbeats of several due locks in one request (the scheduler's
   * batch, one concurrency slot). A lock whose heartbeat failed in it
   * retries on its own, with `#beat`'s backoff.
   */
  async beatBatch(tasks: readonly ScheduledTask<HeldLock>[]): Promise<void> {
    const { clock, hooks, heartbeatPeriod } = this.#options;
    const startedAt = clock.now();
    const roundTrip = this.#batchRoundTrip.estimate();
    const batch: { held: HeldLock; lagMs: number }[] = [];
    let safeFor = heartbeatPeriod;
    for (const task of tasks) {
      const held = task.subject;
      if (held.state !== 'held') continue;
      const safe = this.#safeFor(held);
      if (safe < roundTrip) {
        hooks.giveUp(held, tooLateReason(safe, roundTrip));
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
    let outcomes: BatchHeartbeatOutcome[];
    try {
      outcomes = await hooks.heartbeatBatch(
        batch.map(({ held }) => held),
        attempt.signal,
      );
    } catch (error) {
      // Not expected; but a lock left without a scheduled heartbeat would only ever expire.
      outcomes = batch.map(() => ({ error }));
    } finally {
      attempt.clear();
    }
    this.#batchRoundTrip.add(clock.now() - startedAt);
    batch.forEach(({ held, lagMs }, i) => {
      const outcome = outcomes[i];
      if (outcome === 'confirmed') {
        hooks.heartbeatConfirmed(held, lagMs);
        this.#scheduleHeartbeat(held, {});
        return;
      }
      if (held.state !== 'held') return;
      held.retriesAlone = true;
      if (outcome === 'unbatchable' || outcome === undefined) {
        // Not sent (or, past the end of the outcomes, not known to be): on its own at once, still as overdue as it was.
        this.#scheduleHeartbeat(held, { retryAt: startedAt - lagMs });
        return;
      }
      const willRetry = this.#shouldRetry(held, outcome.error);
      hooks.heartbeatFailed(held, outcome.error, willRetry);
      const pause = willRetry ? this.#firstBackoff() * (1 + this.#random()) : this.#pauseAfterFailedRun();
      this.#scheduleHeartbeat(held, { retryAt: clock.now() + pause });
    });
  }

  /** The backoff before the first retry of a failed heartbeat. */
  #firstBackoff(): number {
    return Math.min(100, this.#options.heartbeatPeriod / 10);
  }

  #pauseAfterFailedRun(): number {
    return Math.min(this.#options.heartbeatPeriod / 4, 1_000);
  }

  /** One heartbeat request, bounded by a period and by what is left of the safe time. */
  async #attempt(held: HeldLock): Promise<void> {
    const { clock, hooks, heartbeatPeriod } = this.#options;
    const safeFor = this.#safeFor(held);
    const roundTrip = this.#roundTrip.estimate();
    if (safeFor < roundTrip) throw hooks.giveUp(held, tooLateReason(safeFor, roundTrip));
    // A period at most, so that a request stuck on a dead connection leaves time for a retry.
    const attempt = this.#deadlines.deadline(Math.min(heartbeatPeriod, safeFor));
    const sentAt = clock.now();
    try {
      await hooks.heartbeat(held, attempt.signal);
    } finally {
      attempt.clear();
    }
    this.#roundTrip.add(clock.now() - sentAt);
  }

  #safeFor(held: HeldLock): number {
    return held.safeTimeLeft(this.#options.clock);
  }

  #shouldRetry(held: HeldLock, error: unknown): boolean {
    return isTransient(error) && held.state === 'held' && this.#safeFor(held) > 0;
  }

  #checkExpiry(held: HeldLock): void {
    if (held.state !== 'held' || held.expiryTask === undefined) return;
    const left = this.#safeFor(held);
    if (left > 0) {
      this.#options.scheduler.schedule(held.expiryTask, this.#options.clock.now() + left);
      return;
    }
    this.#options.hooks.expire(held);
  }

  #checkSession(held: HeldLock): void {
    const monitor = held.sessionMonitor;
    if (monitor === undefined || held.monitorTask === undefined || held.state !== 'held' || monitor.fired) return;
    const dueAt = held.lookupTime + monitor.safeTimeWithoutHeartbeat;
    if (this.#options.clock.now() < dueAt) {
      this.#options.scheduler.schedule(held.monitorTask, dueAt);
      return;
    }
    monitor.fired = true;
    try {
      monitor.callback?.();
    } catch (error) {
      this.#options.logger?.error({ err: error, partitionKey: held.partitionKey }, 'session monitor callback threw');
    }
  }
}
