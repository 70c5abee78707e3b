/**
 * The bounded-clock takeover (client option `clockBound`): a held lock whose
 * stamp (protocol/clock-stamp.ts) still names its RVN was last written at
 * that wall-clock time by a client whose lease counted from no later than
 * it. If every stamping client's wall clock, and this one's, is within
 * `maxSkew` of true time, a stamp older than the lease plus twice `maxSkew`
 * on this clock proves the writer's lease over: its writer's clock may run
 * `maxSkew` behind true time (a stamp earlier than the write), and ours
 * `maxSkew` ahead. Beyond that, a holder behind or a waiter ahead lets the
 * lock be taken while its holder still holds it; a holder ahead or a waiter
 * behind only delays the takeover. Without a valid stamp, nothing is
 * proven, and Java's rule on the monotonic clock decides.
 */
import type { MonotonicClock } from '../base/clock.js';
import type { LockRecord } from '../protocol/index.js';

export class ClockBound {
  readonly #maxSkewMs: number;
  readonly #clock: MonotonicClock & { wallNow(): number };

  constructor(maxSkewMs: number, clock: MonotonicClock & { wallNow(): number }) {
    this.#maxSkewMs = maxSkewMs;
    this.#clock = clock;
  }

  /** Whether the record's stamp is older than its lease plus twice the skew on our wall clock: its holder's lease is over. */
  provesExpired(record: LockRecord): boolean {
    return this.#msUntilProof(record) < 0;
  }

  /** The monotonic instant at which the record's stamp will prove its lease over, if no write comes first; `Infinity` without a stamp. */
  proofAt(record: LockRecord, marginMs: number): number {
    const until = this.#msUntilProof(record);
    return until === Infinity ? Infinity : this.#clock.now() + Math.max(0, until + marginMs);
  }

  #msUntilProof(record: LockRecord): number {
    if (record.writtenAt === undefined || record.isReleased) return Infinity;
    return record.writtenAt + record.leaseDurationMs + 2 * this.#maxSkewMs - this.#clock.wallNow();
  }
}
