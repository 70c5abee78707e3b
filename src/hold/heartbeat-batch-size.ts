/**
 * How many heartbeats go out in one batch, following how fast batches come
 * back. A batch is many writes in one request, and a server may apply them
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

/** A batch of one is a lone heartbeat, which tells nothing about batches: the size never goes below two. */
const SMALLEST = 2;
/** Where the doubling starts. */
const FIRST = 4;

export class HeartbeatBatchSize {
  readonly #largest: number;
  readonly #slowMs: number;
  #size: number;
  #doubling = true;

  /**
   * `largest`: the configured batch size. `slowMs`: a batch answered later
   * than this was too large for the server's pace; one answered within half
   * of it leaves room for more.
   */
  constructor(largest: number, slowMs: number) {
    this.#largest = largest;
    this.#slowMs = slowMs;
    this.#size = Math.min(largest, FIRST);
  }

  /** Most heartbeats in the next batch. */
  get current(): number {
    return this.#size;
  }

  /** A batch of `sent` heartbeats was answered after `roundTripMs`. */
  answered(sent: number, roundTripMs: number): void {
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
