/**
 * One polling loop per lock for all the waiters of one client.
 *
 * Waiting acquisitions read the lock now and then to notice heartbeats
 * (a new RVN restarts their stale timer) and releases (taken at once). When
 * several calls of one client wait for the same lock, one consistent read
 * serves them all: each read's outcome goes to every subscriber, and each
 * waiter still decides and writes for itself. The loop runs while at least
 * one waiter is subscribed and stops, cancelling a read in flight, when the
 * last one leaves.
 *
 * Each poll is due 80–100 % of the shortest `refreshPeriod` among the
 * subscribers after the previous one was due (the first, after the
 * subscriber's own), drawn afresh every time. The jitter only ever makes a
 * poll earlier, so a change is still seen within one refresh period (plus a
 * read's latency), and how long a read took does not move the next one.
 * Drawn afresh, it keeps the reads of different processes from keeping one
 * order round after round: a lock that comes free goes to whichever waiter
 * reads first, and a fixed order would pass over the same waiters each time.
 *
 * A waiter passed over reads sooner: a read that finds the lock held by a new
 * owner counts as a hand-over lost by every waiter subscribed, and the
 * loop's delays shrink by a tenth of the period for each hand-over the
 * waiter passed over most has lost, down to 40 % of the period. So a lock
 * that comes free goes more often to the waiter that has waited through
 * most hand-overs; waiting on a lock that stays with one holder costs no
 * extra read.
 */
import type { MonotonicClock } from '../base/clock.js';
import { lockId } from '../base/lock-key.js';
import type { LockKey } from '../base/lock-key.js';
import type { LockObservation } from '../dynamodb/read-lock.js';
import { MAX_DURATION_MS } from '../settings/options.js';

/** The outcome of one poll: the lock as read (`undefined`: no item) and when the read returned, or the read's error. */
export type PollOutcome =
  | { readonly kind: 'read'; readonly observation: LockObservation | undefined; readonly at: number }
  | { readonly kind: 'error'; readonly error: unknown };

export interface PollSubscription extends Disposable {
  /**
   * The newest outcome this subscriber has not taken yet, waiting for one if
   * needed. Resolves `undefined` once the monotonic clock reaches `until`
   * without one (pass `Infinity` to wait for a poll only); rejects with
   * `signal.reason` when the signal aborts. Older untaken outcomes are
   * dropped: a later read always tells at least as much.
   */
  next(until: number, signal?: AbortSignal): Promise<PollOutcome | undefined>;
  /** Leaves the loop; the last subscriber to leave stops it. Idempotent. */
  dispose(): void;
}

export interface LockPollersOptions {
  /** The consistent read of one lock; `signal` aborts it when no one waits any more. */
  readonly read: (key: LockKey, signal: AbortSignal) => Promise<LockObservation | undefined>;
  readonly clock: MonotonicClock;
  /** A uniform random number in [0, 1). @default Math.random */
  readonly random?: () => number;
}

/** Share of the refresh period by which a poll may come early. */
export const POLL_JITTER = 0.2;

/** How much shorter, as a share of the refresh period, polls come for each hand-over the waiter was passed over. */
export const PASSED_OVER_SPEEDUP = 0.1;

/** The shortest poll delay, as a share of the jittered refresh period, however often a waiter was passed over. */
export const FASTEST_POLL = 0.4;

/**
 * Delay until the next poll: between (1 − POLL_JITTER) × refreshMs and
 * refreshMs, shortened for a waiter passed over `passedOver` times.
 */
export function jitteredPollDelay(refreshMs: number, random: () => number, passedOver = 0): number {
  return refreshMs * (1 - POLL_JITTER * random()) * Math.max(FASTEST_POLL, 1 - PASSED_OVER_SPEEDUP * passedOver);
}

/**
 * `delayMs` after the previous poll was due, whatever the read took; a read
 * that outlasted the delay is followed `delayMs` after it returned, not at
 * once.
 */
export function nextPollDue(due: number, delayMs: number, now: number): number {
  return Number.isFinite(due) && due + delayMs > now ? due + delayMs : now + delayMs;
}

/**
 * Rounded up: timers may fire a fraction of a millisecond before the
 * monotonic clock reaches their due time, and callers re-check the clock.
 * Capped at setTimeout's longest delay; a longer wait re-arms when it fires.
 */
const timerDelay = (dueAt: number, now: number): number => Math.min(MAX_DURATION_MS, Math.max(0, Math.ceil(dueAt - now)));

class Subscriber {
  latest: PollOutcome | undefined;
  /** Set while `next` waits. */
  wake: (() => void) | undefined;
  /** Hand-overs to another owner this waiter has seen while subscribed. */
  passedOver = 0;
  constructor(readonly refreshMs: number) {}
}

/** The loop of one lock. */
class KeyPoller {
  readonly #subscribers = new Set<Subscriber>();
  #timer: NodeJS.Timeout | undefined;
  #dueAt = Infinity;
  #reading: AbortController | undefined;
  /** The owner of the lock at the last read that found it held. */
  #lastOwner: string | undefined;

  constructor(
    private readonly key: LockKey,
    private readonly options: Required<LockPollersOptions>,
    private readonly onIdle: () => void,
  ) {}

  get size(): number {
    return this.#subscribers.size;
  }

  /** `firstPollIn`: the newcomer's first poll is due this long from now, not after a jittered refresh period. */
  add(subscriber: Subscriber, firstPollIn: number | undefined): void {
    this.#subscribers.add(subscriber);
    // A newcomer with a shorter refresh period may need the next poll earlier.
    this.#schedule(firstPollIn ?? jitteredPollDelay(subscriber.refreshMs, this.options.random));
  }

  remove(subscriber: Subscriber): void {
    if (!this.#subscribers.delete(subscriber) || this.#subscribers.size > 0) return;
    clearTimeout(this.#timer);
    this.#timer = undefined;
    this.#dueAt = Infinity;
    this.#reading?.abort(new Error('no acquisition waits for this lock any more'));
    this.#reading = undefined;
    this.onIdle();
  }

  #schedule(delayMs: number): void {
    this.#scheduleAt(this.options.clock.now() + delayMs);
  }

  #scheduleAt(dueAt: number): void {
    if (this.#reading !== undefined) return; // the read in flight schedules the next one
    if (dueAt >= this.#dueAt) return;
    clearTimeout(this.#timer);
    this.#dueAt = dueAt;
    this.#timer = setTimeout(() => void this.#poll(), timerDelay(dueAt, this.options.clock.now()));
  }

  async #poll(): Promise<void> {
    const due = this.#dueAt;
    this.#timer = undefined;
    this.#dueAt = Infinity;
    const reading = new AbortController();
    this.#reading = reading;
    let outcome: PollOutcome;
    try {
      const observation = await this.options.read(this.key, reading.signal);
      outcome = { kind: 'read', observation, at: this.options.clock.now() };
    } catch (error) {
      outcome = { kind: 'error', error };
    }
    if (reading.signal.aborted) return; // everyone left while it was in flight
    this.#reading = undefined;
    const handedOver = this.#handedOver(outcome);
    let shortestRefresh = Infinity;
    let mostPassedOver = 0;
    for (const subscriber of this.#subscribers) {
      if (handedOver) subscriber.passedOver++;
      shortestRefresh = Math.min(shortestRefresh, subscriber.refreshMs);
      mostPassedOver = Math.max(mostPassedOver, subscriber.passedOver);
      subscriber.latest = outcome;
      subscriber.wake?.();
    }
    if (this.#subscribers.size === 0) return;
    const delayMs = jitteredPollDelay(shortestRefresh, this.options.random, mostPassedOver);
    this.#scheduleAt(nextPollDue(due, delayMs, this.options.clock.now()));
  }

  /** Whether `outcome` finds the lock held by another owner than the last read that found it held. */
  #handedOver(outcome: PollOutcome): boolean {
    if (outcome.kind !== 'read' || outcome.observation === undefined || outcome.observation.record.isReleased) return false;
    const owner = outcome.observation.record.ownerName;
    const previous = this.#lastOwner;
    this.#lastOwner = owner;
    return previous !== undefined && previous !== owner;
  }
}

/** The polling loops of one lock client, one per lock that someone waits for. */
export class LockPollers {
  readonly #pollers = new Map<string, KeyPoller>();
  readonly #options: Required<LockPollersOptions>;

  constructor(options: LockPollersOptions) {
    this.#options = { random: Math.random, ...options };
  }

  /** Locks with a loop running. */
  get size(): number {
    return this.#pollers.size;
  }

  /**
   * Joins (or starts) the loop of `key`; the first poll comes within
   * `refreshMs`, or within `firstPollIn` when given.
   */
  subscribe(key: LockKey, refreshMs: number, firstPollIn?: number): PollSubscription {
    const id = lockId(key);
    let poller = this.#pollers.get(id);
    if (poller === undefined) {
      const created = new KeyPoller(key, this.#options, () => {
        if (this.#pollers.get(id) === created) this.#pollers.delete(id);
      });
      this.#pollers.set(id, created);
      poller = created;
    }
    const subscriber = new Subscriber(refreshMs);
    poller.add(subscriber, firstPollIn);
    const joined = poller;
    let disposed = false;
    const dispose = (): void => {
      if (disposed) return;
      disposed = true;
      subscriber.wake?.();
      joined.remove(subscriber);
    };
    return {
      next: (until, signal) => this.#next(subscriber, until, signal, () => disposed),
      dispose,
      [Symbol.dispose]: dispose,
    };
  }

  #next(subscriber: Subscriber, until: number, signal: AbortSignal | undefined, disposed: () => boolean): Promise<PollOutcome | undefined> {
    const clock = this.#options.clock;
    return new Promise((resolve, reject) => {
      let timer: NodeJS.Timeout | undefined;
      const finish = (): void => {
        clearTimeout(timer);
        subscriber.wake = undefined;
        signal?.removeEventListener('abort', onAbort);
      };
      const onAbort = (): void => {
        finish();
        reject(signal?.reason);
      };
      const check = (): void => {
        if (signal?.aborted) return onAbort();
        const outcome = subscriber.latest;
        if (outcome !== undefined) {
          subscriber.latest = undefined;
          finish();
          return resolve(outcome);
        }
        const now = clock.now();
        if (now >= until || disposed()) {
          finish();
          return resolve(undefined);
        }
        if (until !== Infinity) {
          clearTimeout(timer);
          timer = setTimeout(check, timerDelay(until, now));
        }
      };
      subscriber.wake = check;
      signal?.addEventListener('abort', onAbort, { once: true });
      check();
    });
  }
}
