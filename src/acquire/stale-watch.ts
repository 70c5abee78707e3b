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
import type { LockSighting } from '../dynamodb/read-lock.js';

/**
 * Staleness is "unchanged for strictly longer than the lease"; the takeover
 * instant lies this far past the lease so that the strict check holds when
 * the timer fires.
 */
export const TAKEOVER_MARGIN_MS = 1;

export class StaleWatch {
  #watched: LockSighting | undefined;

  /** The sighting that started the current timer. */
  get watched(): LockSighting | undefined {
    return this.#watched;
  }

  /**
   * Takes in a sighting of a held lock: the same RVN keeps its timer running;
   * a new RVN (the holder heartbeated) restarts it from this sighting.
   */
  observe(sighting: LockSighting): void {
    if (this.#watched?.record.recordVersionNumber === sighting.record.recordVersionNumber) return;
    this.#watched = sighting;
  }

  /** True once the watched RVN has been unchanged for strictly longer than its lease. */
  isStale(now: number): boolean {
    const watched = this.#watched;
    return watched !== undefined && now - watched.lookupTime > watched.record.leaseDurationMs;
  }

  /** When to attempt the takeover; `Infinity` while nothing is timed. */
  takeoverAt(): number {
    const watched = this.#watched;
    return watched === undefined ? Infinity : watched.lookupTime + watched.record.leaseDurationMs + TAKEOVER_MARGIN_MS;
  }
}
