/**
 * The pace of heartbeat batches: how long one takes, and how many
 * heartbeats go out in one, following how fast batches come back. A batch is many writes in one request, and a server may apply them
 * one after another between other clients' writes: on DynamoDB Local under
 * load a batch of 25 took a second while a lone write took a tenth of that.
 * An attempt gets a period at most, so such batches failed whole, every lock
 * in them at once, each then retried alone as the safe time ran out.
 *
 * The size starts small and doubles on every fast, full batch until the
 * first slow one (a server that keeps up has full batches within a few
 * round trips); a slow or unanswered batch halves it, and from then on a
 * fast one grows it by one. Real DynamoDB applies a batch's statements in
 * parallel, so there the size stays at its maximum.
 */
import { SLOW_BATCH_SHARE_OF_PERIOD } from './heartbeat-tuning.js';
import { RoundTripEstimate } from './round-trip-estimate.js';

/** A batch of one is a lone heartbeat, which tells nothing about batches: the size never goes below two. */
const SMALLEST = 2;
/** Where the doubling starts. */
const FIRST = 4;

export class HeartbeatBatchPace {
  readonly #largest: number;
  /** A batch answered later than this was too large for the server's pace; one answered within half of it leaves room for more. */
  readonly #slowMs: number;
  readonly #roundTrip: RoundTripEstimate;
  #size: number;
  #doubling = true;

  /** `largest`: the configured batch size. */
  constructor(largest: number, heartbeatPeriod: number) {
    this.#largest = largest;
    this.#slowMs = heartbeatPeriod * SLOW_BATCH_SHARE_OF_PERIOD;
    // An attempt gets a period at most.
    this.#roundTrip = new RoundTripEstimate(heartbeatPeriod);
    this.#size = Math.min(largest, FIRST);
  }

  /** Most heartbeats in the next batch. */
  get size(): number {
    return this.#size;
  }

  /** How long an answered batch takes, in ms; 0 until one was answered. */
  roundTripMs(): number {
    return this.#roundTrip.estimate();
  }

  /** A batch of `sent` heartbeats was answered after `roundTripMs`. */
  answered(sent: number, roundTripMs: number): void {
    this.#roundTrip.add(roundTripMs);
    if (roundTripMs > this.#slowMs) {
      this.#shrink(sent);
      return;
    }
    // Only a full batch says that a larger one would also have been fast.
    if (roundTripMs > this.#slowMs / 2 || sent < this.#size) return;
    this.#size = Math.min(this.#largest, this.#doubling ? this.#size * 2 : this.#size + 1);
  }

  /** A batch of `sent` heartbeats got no answer within its attempt. */
  unanswered(sent: number): void {
    this.#shrink(sent);
  }

  #shrink(sent: number): void {
    this.#doubling = false;
    this.#size = Math.min(this.#size, Math.max(SMALLEST, Math.floor(sent / 2)));
  }
}
