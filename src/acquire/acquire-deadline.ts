/**
 * How long one acquisition may go on, and when its requests are cut off.
 *
 * The call waits `additionalTimeToWaitForLock`, plus the lease of the first
 * holder it sees (PROTOCOL.md §5.4), counted from when it saw it if the
 * wait had run out by then. A request that never gets an answer (a
 * silent connection; the SDK's default client has no request timeout) must
 * not hold the call past that deadline for ever: every request of the call
 * follows the caller's signal and a cut-off that falls a grace (a lease, or
 * a refresh period if longer) past Java's budget, room for the SDK's own
 * retries, throttled ones included, to end by themselves. The call then ends
 * with `DynamoDBUnavailableError`, or, when DynamoDB answered and the lock
 * was held, as it last found it.
 *
 * Time the call spends waiting to be admitted by the acquisition gate
 * (behind the client's own requests) does not count against its wait:
 * nothing has been asked of DynamoDB then, and a burst of thousands of acquisitions must not
 * give up on its last locks for the time the first ones took. It does count
 * against the cut-off, which stays where the call's wait and grace put it:
 * a call never admitted (every slot held by requests that get no
 * answer, or a queue that moves too slowly) still ends by then, with a
 * reason that says no request slot came free.
 *
 * The deadline also bounds each request of the call (request-bound.ts). A
 * call that sends one request at a time (a single lock's) needs no signal
 * of its own per request: its requests share the deadline's until a bound
 * falls, and the next request gets a fresh one. Per acquisition that is
 * one abort controller, listener and timer fewer, which the SDK's floor
 * benchmark counts. A call that sends several at once (a group's reads)
 * gives each its own.
 */
import type { MonotonicClock } from '../base/clock.js';
import { MAX_DURATION_MS } from '../settings/options.js';
import { withinBound, type CallDeadline } from './request-bound.js';
import { TAKEOVER_MARGIN_MS } from './stale-watch.js';

export interface AcquireDeadlineOptions {
  readonly clock: MonotonicClock;
  /** Milliseconds to wait beyond the first holder's lease; `Infinity` never gives up. */
  readonly waitMs: number;
  /** Milliseconds past Java's budget (the wait and the first holder's lease, from the call's start) before requests are cut off. */
  readonly graceMs: number;
  /** The caller's signal, if any. */
  readonly signal?: AbortSignal | undefined;
  /** Whether the call never has two requests in flight at once: they may then share one signal. @default false */
  readonly oneRequestAtATime?: boolean | undefined;
}

export class AcquireDeadline implements CallDeadline, Disposable {
  readonly #clock: MonotonicClock;
  readonly #start: number;
  readonly #graceMs: number;
  readonly #callerSignal: AbortSignal | undefined;
  readonly #oneRequestAtATime: boolean;
  #budgetMs: number;
  /** Java's budget: the wait plus the first holder's lease, both from the call's start. The cut-off falls a grace past it. */
  #javaBudgetMs: number;
  #holderLeaseAdded = false;
  /** Set while the call waits to be admitted. */
  #pausedAt: number | undefined;
  /** Time spent waiting to be admitted, so far. */
  #pausedMs = 0;
  /** Aborts with the caller's signal and at the cut-off; shared by requests sent one at a time, replaced when a bound falls. */
  #requests = new AbortController();
  #cutOff = false;
  /** The bound of the request in flight, when requests go one at a time. */
  #boundTimer: NodeJS.Timeout | undefined;
  /**
   * Falls at or before the cut-off: a holder's lease only moves the cut-off
   * later, so it leaves the timer be, and it sets itself again for the rest
   * when it falls early.
   */
  #timer: NodeJS.Timeout | undefined;
  readonly #onCallerAbort = (): void => this.#requests.abort(this.#callerSignal?.reason);

  constructor(options: AcquireDeadlineOptions) {
    this.#clock = options.clock;
    this.#start = options.clock.now();
    this.#graceMs = options.graceMs;
    this.#budgetMs = options.waitMs;
    this.#javaBudgetMs = options.waitMs;
    this.#callerSignal = options.signal;
    this.#oneRequestAtATime = options.oneRequestAtATime === true;
    if (options.signal?.aborted) this.#onCallerAbort();
    else options.signal?.addEventListener('abort', this.#onCallerAbort, { once: true });
    this.#arm();
  }

  /** What every request of the call follows: the caller's signal and the cut-off. */
  get requestSignal(): AbortSignal {
    return this.#requests.signal;
  }

  /** Milliseconds since the call started, but for its waits to be admitted. */
  get elapsed(): number {
    const pausedNow = this.#pausedAt === undefined ? 0 : this.#clock.now() - this.#pausedAt;
    return this.#clock.now() - this.#start - this.#pausedMs - pausedNow;
  }

  /** Milliseconds the call may still wait; `Infinity` when it waits until acquired or aborted. */
  get remaining(): number {
    return this.#budgetMs - this.elapsed;
  }

  /** True once the call has waited all it may. */
  get passed(): boolean {
    return this.remaining < 0;
  }

  /** True once the call's requests have been cut off. */
  get cutOff(): boolean {
    return this.#cutOff;
  }

  /**
   * True once the cut-off instant has passed, also while its timer has yet
   * to run (a stalled process): no late attempt starts then, since the
   * timer would abort it in flight and leave its outcome unknown.
   */
  get beyondCutOff(): boolean {
    return this.#cutOff || this.#clock.now() >= this.#cutOffAt();
  }

  /**
   * The first holder seen adds its lease to the wait; later ones add
   * nothing. Its RVN is timed from the answer that showed it, so when that
   * answer came after the wait had run out (a slow or failed first request,
   * `acquireOnlyIfLockAlreadyExists` before the item existed, and with no
   * wait at all, any first read), the lease counts from now: otherwise the
   * call would give up just before the takeover falls due. The cut-off
   * stays a grace past Java's budget, so that a call whose requests go
   * unanswered ends no later than it did.
   */
  addHolderLease(leaseDurationMs: number): void {
    if (this.#holderLeaseAdded) return;
    this.#holderLeaseAdded = true;
    this.#javaBudgetMs += leaseDurationMs;
    this.#budgetMs = Math.max(this.#budgetMs, this.elapsed + TAKEOVER_MARGIN_MS) + leaseDurationMs;
  }

  /** The call waits to be admitted by the gate: its wait stands still (its cut-off does not). */
  pause(): void {
    if (this.#pausedAt !== undefined) return;
    this.#pausedAt = this.#clock.now();
  }

  /** It was admitted: its time runs again. */
  resume(): void {
    if (this.#pausedAt === undefined) return;
    this.#pausedMs += this.#clock.now() - this.#pausedAt;
    this.#pausedAt = undefined;
  }

  /**
   * Runs one request of the call, following {@link requestSignal} and
   * abandoned with a `TimeoutError` once `boundMs` pass without an answer;
   * the call goes on.
   */
  withinBound<T>(boundMs: number, request: (signal: AbortSignal) => Promise<T>): Promise<T> {
    if (!this.#oneRequestAtATime) return withinBound(boundMs, this.requestSignal, request);
    return this.#sharingSignal(boundMs, request);
  }

  async #sharingSignal<T>(boundMs: number, request: (signal: AbortSignal) => Promise<T>): Promise<T> {
    const requests = this.#requests;
    let bound: DOMException | undefined;
    this.#boundTimer = setTimeout(
      () => {
        if (requests.signal.aborted) return; // the call ended first
        bound = new DOMException(`no answer within ${Math.ceil(boundMs)} ms: the request was abandoned`, 'TimeoutError');
        this.#requests = new AbortController(); // for the call's next request
        requests.abort(bound);
      },
      Math.max(1, Math.ceil(boundMs)),
    );
    this.#boundTimer.unref();
    try {
      return await request(requests.signal);
    } catch (error) {
      // The SDK rejects with an error of its own on abort; what ended the request is the bound (unless the call ended since).
      if (bound !== undefined && !this.#requests.signal.aborted) throw bound;
      throw error;
    } finally {
      clearTimeout(this.#boundTimer);
      this.#boundTimer = undefined;
    }
  }

  [Symbol.dispose](): void {
    clearTimeout(this.#boundTimer);
    clearTimeout(this.#timer);
    this.#timer = undefined;
    this.#callerSignal?.removeEventListener('abort', this.#onCallerAbort);
  }

  #arm(): void {
    if (!Number.isFinite(this.#budgetMs) || this.#cutOff) return;
    const ms = Math.min(MAX_DURATION_MS, Math.max(1, this.#cutOffAt() - this.#clock.now()));
    this.#timer = setTimeout(() => this.#fall(), ms);
    this.#timer.unref();
  }

  #cutOffAt(): number {
    return this.#start + this.#javaBudgetMs + this.#graceMs;
  }

  #fall(): void {
    this.#timer = undefined;
    // Early (a holder's lease moved the cut-off later since): the rest.
    if (this.#clock.now() < this.#cutOffAt()) {
      this.#arm();
      return;
    }
    this.#cutOff = true;
    const reason =
      this.#pausedAt === undefined
        ? "the acquisition's deadline passed without an answer"
        : `no request slot came free for ${Math.round(this.#clock.now() - this.#pausedAt)} ms: the client's requests in flight got no answer in time`;
    this.#requests.abort(new DOMException(reason, 'TimeoutError'));
  }
}
