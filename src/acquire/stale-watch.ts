/**
 * The stale timer of one waiting acquisition (PROTOCOL.md §5.4): which RVN of
 * a held lock is being timed, since when, and the instant it becomes stale.
 *
 * A timer starts when the response that first showed an RVN arrived (a read,
 * or a refused write's ALL_OLD item): the holder wrote that RVN before, so
 * timer start + lease is never earlier than the holder's own expiry. The
 * takeover write is conditioned on that RVN, so attempting it at the instant
 * the timer runs out, without a read first, decides exactly what a read
 * followed by the write would.
 */
import type { LockObservation } from '../dynamodb/read-lock.js';
import type { ClockBound } from './clock-bound.js';

/**
 * Staleness is "unchanged for strictly longer than the lease"; the takeover
 * instant lies this far past the lease so that the strict check holds when
 * the timer fires.
 */
export const TAKEOVER_MARGIN_MS = 1;

/** What the watch says of a held lock it has taken in: the observation whose RVN it times, and whether that RVN is stale. */
export interface Watched {
  readonly observation: LockObservation;
  readonly stale: boolean;
}

export class StaleWatch {
  #observation: LockObservation | undefined;
  readonly #clockBound: ClockBound | undefined;

  /** `clockBound`: also stale once the timed item's stamp proves its lease over (clock-bound.ts). */
  constructor(clockBound?: ClockBound) {
    this.#clockBound = clockBound;
  }

  /** The observation that started the current timer: its RVN is the one being timed. */
  get observation(): LockObservation | undefined {
    return this.#observation;
  }

  /**
   * Takes in an observation of a held lock: the same RVN keeps its timer
   * running; a new RVN (the holder heartbeated) restarts it from this one.
   */
  observe(observation: LockObservation): void {
    if (this.#observation?.record.recordVersionNumber === observation.record.recordVersionNumber) return;
    this.#observation = observation;
  }

  /**
   * Takes in what was read of the lock at `now`: a free lock (no item, or
   * released) stops the timer, a held one is observed. Returns what the
   * watch then says; `undefined` for a free lock.
   */
  take(existing: LockObservation | undefined, now: number): Watched | undefined {
    if (existing === undefined || existing.record.isReleased) {
      // The timed RVN is no longer held: its takeover instant means nothing now.
      this.forget();
      return undefined;
    }
    this.observe(existing);
    return { observation: this.#observation ?? existing, stale: this.isStale(now) };
  }

  /** Stops timing: the lock was seen free. */
  forget(): void {
    this.#observation = undefined;
  }

  /** True once the timed RVN has been unchanged for strictly longer than its lease, or its stamp proves the lease over. */
  isStale(now: number): boolean {
    const timed = this.#observation;
    if (timed === undefined) return false;
    return now - timed.observedAt > timed.record.leaseDurationMs || (this.#clockBound?.provesExpired(timed.record) ?? false);
  }

  /** When to attempt the takeover; `Infinity` while nothing is timed. Read again after each wait: the stamp's instant follows the wall clock. */
  takeoverAt(): number {
    const timed = this.#observation;
    if (timed === undefined) return Infinity;
    const watched = timed.observedAt + timed.record.leaseDurationMs + TAKEOVER_MARGIN_MS;
    return Math.min(watched, this.#clockBound?.proofAt(timed.record, TAKEOVER_MARGIN_MS) ?? Infinity);
  }
}
