/**
 * What `shouldSkipBlockingWait` remembers between calls (PROTOCOL.md §5.5):
 * for each lock, the RVN this client first saw and when. A later call that
 * sees the same RVN after its whole lease may take the lock over without
 * ever having waited.
 */
import type { MonotonicClock } from '../base/clock.js';

interface Observation {
  readonly recordVersionNumber: string;
  readonly observedAt: number;
  readonly leaseDurationMs: number;
}

export class LockObservationCache {
  readonly #entries = new Map<string, Observation>();

  constructor(
    private readonly capacity: number,
    private readonly clock: MonotonicClock,
  ) {}

  /**
   * Records an observation of a held lock and tells whether its RVN has been
   * unchanged for longer than its lease since this client first saw it.
   */
  isStale(lockId: string, recordVersionNumber: string, leaseDurationMs: number): boolean {
    const now = this.clock.now();
    const seen = this.#entries.get(lockId);
    if (seen !== undefined && seen.recordVersionNumber === recordVersionNumber) {
      return now - seen.observedAt > seen.leaseDurationMs;
    }
    if (seen === undefined) this.#makeRoom(now);
    // Re-insert so that the Map's order stays the order of observations, oldest first.
    this.#entries.delete(lockId);
    this.#entries.set(lockId, { recordVersionNumber, observedAt: now, leaseDurationMs });
    return false;
  }

  forget(lockId: string): void {
    this.#entries.delete(lockId);
  }

  get size(): number {
    return this.#entries.size;
  }

  #makeRoom(now: number): void {
    if (this.#entries.size < this.capacity) return;
    // Old observations are useless once twice their lease has passed; drop those first.
    for (const [id, seen] of this.#entries) {
      if (now - seen.observedAt > 2 * seen.leaseDurationMs) this.#entries.delete(id);
    }
    for (const id of this.#entries.keys()) {
      if (this.#entries.size < this.capacity) break;
      this.#entries.delete(id);
    }
  }
}
