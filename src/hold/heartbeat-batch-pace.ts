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
 *
 * Smaller batches cost nothing only while calls are to spare. A server may
 * be slow for every request whatever it holds (a far region, a queue in
 * front of it); once every call is taken and due heartbeats wait for one,
 * smaller batches would carry fewer heartbeats at a time. Then a slow
 * batch keeps its size, and a full one grows while it is answered within
 * half a period and nearly as soon as batches of two; a batch answered
 * later than three quarters of a period, close to the bound its attempt
 * gets, halves whatever the cause.
 */
import { BATCH_WAIT_SHARE_OF_PERIOD, SLOW_BATCH_SHARE_OF_PERIOD } from './heartbeat-tuning.js';
import { RoundTripEstimate } from './round-trip-estimate.js';

/** A batch of one is a lone heartbeat, which tells nothing about batches: the size never goes below two. */
const SMALLEST = 2;
/** Where the doubling starts. */
const FIRST = 4;
/** A batch answered later than this share of a period came close to its attempt's bound (a period at most), whatever made it slow. */
const NEAR_BOUND_SHARE = 3 / 4;
/** While due heartbeats wait for a call, a full batch answered within this share of a period grows. */
const CROWDED_GROWTH_SHARE = 1 / 2;
/**
 * ... and only if batches of two took nearly as long: where each statement
 * costs the server its time, larger batches would carry no more heartbeats
 * a second, only each one later.
 */
const SIZE_FREE_RATIO = 1.25;

export class HeartbeatBatchPace {
  readonly #largest: number;
  /** A batch answered later than this was too large for the server's pace; one answered within half of it leaves room for more. */
  readonly #slowMs: number;
  readonly #nearBoundMs: number;
  readonly #crowdedGrowthMs: number;
  /** A due heartbeat that has waited longer than this to be sent waited for a call, not for a fuller batch. */
  readonly #crowdedMs: number;
  readonly #roundTrip: RoundTripEstimate;
  /** How long batches of two take: what any batch takes whatever its size, if larger ones take no longer. */
  readonly #smallestRoundTrip: RoundTripEstimate;
  #size: number;
  #doubling = true;

  /** `largest`: the configured batch size. */
  constructor(largest: number, heartbeatPeriod: number) {
    this.#largest = largest;
    this.#slowMs = heartbeatPeriod * SLOW_BATCH_SHARE_OF_PERIOD;
    this.#nearBoundMs = heartbeatPeriod * NEAR_BOUND_SHARE;
    this.#crowdedGrowthMs = heartbeatPeriod * CROWDED_GROWTH_SHARE;
    this.#crowdedMs = heartbeatPeriod * BATCH_WAIT_SHARE_OF_PERIOD;
    // An attempt gets a period at most.
    this.#roundTrip = new RoundTripEstimate(heartbeatPeriod);
    this.#smallestRoundTrip = new RoundTripEstimate(heartbeatPeriod);
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

  /**
   * A batch of `sent` heartbeats was answered after `roundTripMs`, when the
   * longest a due heartbeat has waited to be sent is `overdueMs`.
   */
  answered(sent: number, roundTripMs: number, overdueMs: number): void {
    this.#roundTrip.add(roundTripMs);
    if (sent <= SMALLEST) this.#smallestRoundTrip.add(roundTripMs);
    const crowded = overdueMs > this.#crowdedMs;
    // Only a full batch says that a larger one would also have been answered as soon.
    const full = sent >= this.#size;
    if (roundTripMs > this.#nearBoundMs) this.#shrink(sent);
    else if (crowded) {
      const smallestMs = this.#smallestRoundTrip.estimate();
      const sizeFree = smallestMs > 0 && roundTripMs <= smallestMs * SIZE_FREE_RATIO;
      if (full && sizeFree && roundTripMs <= this.#crowdedGrowthMs) this.#grow();
    } else if (roundTripMs > this.#slowMs) this.#shrink(sent);
    else if (full && roundTripMs <= this.#slowMs / 2) this.#grow();
  }

  /** A batch of `sent` heartbeats got no answer within its attempt. */
  unanswered(sent: number): void {
    this.#shrink(sent);
  }

  #grow(): void {
    this.#size = Math.min(this.#largest, this.#doubling ? this.#size * 2 : this.#size + 1);
  }

  #shrink(sent: number): void {
    this.#doubling = false;
    this.#size = Math.min(this.#size, Math.max(SMALLEST, Math.floor(sent / 2)));
  }
}
