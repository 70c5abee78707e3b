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
 * front of it); while due heartbeats wait for a call, smaller batches would
 * carry fewer heartbeats at a time. Then a slow batch keeps its size, and a
 * full one grows by one while it is answered within half a period and
 * nearly as soon as the smallest batches; a batch answered later than three
 * quarters of a period, close to the bound its attempt gets, halves
 * whatever the cause.
 */
import type { MonotonicClock } from '../base/clock.js';
import { BEHIND_SHARE_OF_PERIOD, SLOW_BATCH_SHARE_OF_PERIOD } from './heartbeat-tuning.js';
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
 * ... and only if the smallest batches took nearly as long: where each
 * statement costs the server its time, larger batches would carry no more
 * heartbeats a second, only each one later.
 */
const SIZE_FREE_RATIO = 1.25;

/** The smallest batches answered so far: their size, and how long they take. */
interface Smallest {
  readonly size: number;
  readonly roundTrip: RoundTripEstimate;
}

export class HeartbeatBatchPace {
  readonly #largest: number;
  readonly #periodMs: number;
  readonly #clock: MonotonicClock;
  /** A batch answered later than this was too large for the server's pace; one answered within half of it leaves room for more. */
  readonly #slowMs: number;
  readonly #nearBoundMs: number;
  readonly #crowdedGrowthMs: number;
  /** A due heartbeat unsent for longer than this waited for a call: well beyond the wait for a fuller batch, and a timer's lateness. */
  readonly #crowdedMs: number;
  readonly #roundTrip: RoundTripEstimate;
  #smallest: Smallest | undefined;
  /** When an answer last found due heartbeats waiting for a call. Answers come back together and the first ones free calls, so it counts for a period. */
  #crowdedAt = -Infinity;
  #size: number;
  #doubling = true;

  /** `largest`: the configured batch size. */
  constructor(largest: number, heartbeatPeriod: number, clock: MonotonicClock) {
    this.#largest = largest;
    this.#periodMs = heartbeatPeriod;
    this.#clock = clock;
    this.#slowMs = heartbeatPeriod * SLOW_BATCH_SHARE_OF_PERIOD;
    this.#nearBoundMs = heartbeatPeriod * NEAR_BOUND_SHARE;
    this.#crowdedGrowthMs = heartbeatPeriod * CROWDED_GROWTH_SHARE;
    this.#crowdedMs = heartbeatPeriod * BEHIND_SHARE_OF_PERIOD;
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

  /**
   * A batch of `sent` heartbeats was answered after `roundTripMs`, when the
   * longest a due heartbeat has waited to be sent is `overdueMs`.
   */
  answered(sent: number, roundTripMs: number, overdueMs: number): void {
    this.#roundTrip.add(roundTripMs);
    const sizeFree = this.#sizeFree(sent, roundTripMs);
    const now = this.#clock.now();
    if (overdueMs > this.#crowdedMs) this.#crowdedAt = now;
    // Only a full batch says that a larger one would also have been answered as soon.
    const full = sent >= this.#size;
    if (roundTripMs > this.#nearBoundMs) this.#shrink(sent);
    else if (now - this.#crowdedAt <= this.#periodMs) {
      if (full && sizeFree && roundTripMs <= this.#crowdedGrowthMs) this.#size = Math.min(this.#largest, this.#size + 1);
    } else if (roundTripMs > this.#slowMs) this.#shrink(sent);
    else if (full && roundTripMs <= this.#slowMs / 2) this.#size = Math.min(this.#largest, this.#doubling ? this.#size * 2 : this.#size + 1);
  }

  /** A batch of `sent` heartbeats got no answer within its attempt. */
  unanswered(sent: number): void {
    this.#shrink(sent);
  }

  /** Learns how long the smallest batches take, and whether this one took nearly as long. */
  #sizeFree(sent: number, roundTripMs: number): boolean {
    if (this.#smallest === undefined || sent < this.#smallest.size) {
      this.#smallest = { size: sent, roundTrip: new RoundTripEstimate(this.#periodMs) };
    }
    if (sent === this.#smallest.size) this.#smallest.roundTrip.add(roundTripMs);
    return roundTripMs <= this.#smallest.roundTrip.estimate() * SIZE_FREE_RATIO;
  }

  #shrink(sent: number): void {
    this.#doubling = false;
    this.#size = Math.min(this.#size, Math.max(SMALLEST, Math.floor(sent / 2)));
  }
}
