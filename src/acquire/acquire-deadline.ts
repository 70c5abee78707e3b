/**
 * How long one acquisition may go on, and when its requests are cut off.
 *
 * The call waits `additionalTimeToWaitForLock`, plus the lease of the first
 * holder it sees (PROTOCOL.md §5.3). A request that never gets an answer (a
 * silent connection; the SDK's default client has no request timeout) must
 * not hold the call past that deadline for ever: every request of the call
 * follows the caller's signal and a cut-off that falls once the deadline is
 * a lease past, room for the SDK's own retries, throttled ones included, to
 * end by themselves. The call then ends with `DynamoDBUnavailableError`.
 *
 * Time the call spends waiting for its turn among the client's own requests
 * (the acquisition gate) does not count while the queue moves: nothing has
 * been asked of DynamoDB then, and a burst of thousands of acquisitions must
 * not end its last ones for the time the first ones took. It counts from
 * the last time the gate let a request through: when every slot is held by
 * requests that get no answer, the call still ends at its own cut-off, with
 * a reason that says no request slot came free.
 */
import type { MonotonicClock } from '../clock.js';
import { MAX_DURATION_MS } from '../options.js';

export interface AcquireDeadlineOptions {
  readonly clock: MonotonicClock;
  /** Milliseconds to wait beyond the first holder's lease; `Infinity` never gives up. */
  readonly waitMs: number;
  /** Milliseconds past the deadline before requests are cut off. */
  readonly graceMs: number;
  /** The caller's signal, if any. */
  readonly signal?: AbortSignal | undefined;
  /** Monotonic time at which the queue for turns last moved (`AcquisitionGate.lastAdmittedAt`). */
  readonly queueMovedAt: () => number;
}

export class AcquireDeadline implements Disposable {
  readonly #clock: MonotonicClock;
  readonly #start: number;
  readonly #graceMs: number;
  readonly #callerSignal: AbortSignal | undefined;
  readonly #queueMovedAt: () => number;
  #budgetMs: number;
  #holderLeaseAdded = false;
  /** Set while the call waits for its turn. */
  #pausedAt: number | undefined;
  /** Time spent waiting for its turn while the queue moved, so far. */
  #pausedMs = 0;
  readonly #requests = new AbortController();
  #cutOff = false;
  /**
   * Falls at or before the cut-off: pauses and a holder's lease only move
   * the cut-off later, so they leave the timer be, and it sets itself again
   * for the rest when it falls early.
   */
  #timer: NodeJS.Timeout | undefined;
  readonly #onCallerAbort = (): void => this.#requests.abort(this.#callerSignal?.reason);

  constructor(options: AcquireDeadlineOptions) {
    this.#clock = options.clock;
    this.#start = options.clock.now();
    this.#graceMs = options.graceMs;
    this.#budgetMs = options.waitMs;
    this.#callerSignal = options.signal;
    this.#queueMovedAt = options.queueMovedAt;
    if (options.signal?.aborted) this.#onCallerAbort();
    else options.signal?.addEventListener('abort', this.#onCallerAbort, { once: true });
    this.#arm();
  }

  /** What every request of the call follows: the caller's signal and the cut-off. */
  get requestSignal(): AbortSignal {
    return this.#requests.signal;
  }

  /** Milliseconds since the call started, but for its waits for its turn while the queue moved. */
  get elapsed(): number {
    return this.#clock.now() - this.#start - this.#pausedMs - this.#pausedInQueue();
  }

  /** Milliseconds the call may still wait; `Infinity` when it waits until acquired or aborted. */
  get remaining(): number {
    return this.#budgetMs - this.elapsed;
  }

  /** True once the call has waited all it may. */
  get passed(): boolean {
    return this.elapsed > this.#budgetMs;
  }

  /** True once the call's requests have been cut off. */
  get cutOff(): boolean {
    return this.#cutOff;
  }

  /** The first holder seen adds its lease to the wait; later ones add nothing. */
  addHolderLease(leaseDurationMs: number): void {
    if (this.#holderLeaseAdded) return;
    this.#holderLeaseAdded = true;
    this.#budgetMs += leaseDurationMs;
  }

  /** The call waits for its turn among the client's own requests: its time stands still while the queue moves. */
  pause(): void {
    if (this.#pausedAt !== undefined) return;
    this.#pausedAt = this.#clock.now();
  }

  /** Its turn came: its time runs again. */
  resume(): void {
    if (this.#pausedAt === undefined) return;
    // Its own turn moved the queue: the whole wait is forgiven.
    this.#pausedMs += this.#clock.now() - this.#pausedAt;
    this.#pausedAt = undefined;
  }

  [Symbol.dispose](): void {
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

  /** The part of the current wait for a turn that passed before the queue last moved. */
  #pausedInQueue(): number {
    if (this.#pausedAt === undefined) return 0;
    return Math.max(0, Math.min(this.#clock.now(), this.#queueMovedAt()) - this.#pausedAt);
  }

  #cutOffAt(): number {
    return this.#start + this.#pausedMs + this.#pausedInQueue() + this.#budgetMs + this.#graceMs;
  }

  #fall(): void {
    this.#timer = undefined;
    // Early (the cut-off moved later since: a holder's lease, or the queue moved): the rest.
    if (this.#clock.now() < this.#cutOffAt()) {
      this.#arm();
      return;
    }
    this.#cutOff = true;
    const reason =
      this.#pausedAt === undefined
        ? "the acquisition's deadline passed without an answer"
        : `no request slot came free for ${Math.round(this.#clock.now() - Math.max(this.#pausedAt, this.#queueMovedAt()))} ms: the client's requests in flight got no answer`;
    this.#requests.abort(new DOMException(reason, 'TimeoutError'));
  }
}
