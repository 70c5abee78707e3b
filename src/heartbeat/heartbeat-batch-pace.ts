/**
 * The pace of heartbeat batches: how long one takes, and how many
 * heartbeats go out in one, following how fast batches come back. A batch is many writes in one request, and a server may apply them
 * one after another between other clients' writes: on DynamoDB Local under
 * load a batch of 25 took a second while a lone write took a tenth of that,
 * longer than the period of the locks in it: every lock of such a batch is
 * late at once, and one late for its safe time fails with all the others.
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
 * nearly as soon as the smallest batches, whose round trip is measured
 * afresh, with one batch of their size, once it is a period old (the
 * server may have slowed for every request since); a batch answered later
 * than three quarters of a period, nearly when its locks are due again,
 * halves whatever the cause.
 */
import type { MonotonicClock } from '../base/clock.js';
import { BEHIND_SHARE_OF_PERIOD, SLOW_BATCH_SHARE_OF_PERIOD } from './heartbeat-tuning.js';
import { RoundTripEstimate } from './round-trip-estimate.js';

/** A batch of one is a lone heartbeat, which tells nothing about batches: the size never goes below two. */
const SMALLEST = 2;
/** Where the doubling starts. */
const FIRST = 4;
/** A batch answered later than this share of a period came nearly when its locks are due again, whatever made it slow. */
const NEAR_BOUND_SHARE = 3 / 4;
/** While due heartbeats wait for a call, a full batch answered within this share of a period grows. */
const CROWDED_GROWTH_SHARE = 1 / 2;
/**
 * ... and only if the smallest batches took nearly as long: where each
 * statement costs the server its time, larger batches would carry no more
 * heartbeats a second, only each one later.
 */
const SIZE_FREE_RATIO = 1.25;

/** The smallest batches answered so far: their size, how long they take, and when one was last answered. */
interface Smallest {
  readonly size: number;
  readonly roundTrip: RoundTripEstimate;
  answeredAt: number;
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
  /** The smallest batches' round trip is a period old: the next batch goes at their size, to measure it again. */
  #remeasuring = false;

  /** `largest`: the configured batch size. */
  constructor(largest: number, heartbeatPeriod: number, clock: MonotonicClock) {
    this.#largest = largest;
    this.#periodMs = heartbeatPeriod;
    this.#clock = clock;
    this.#slowMs = heartbeatPeriod * SLOW_BATCH_SHARE_OF_PERIOD;
    this.#nearBoundMs = heartbeatPeriod * NEAR_BOUND_SHARE;
    this.#crowdedGrowthMs = heartbeatPeriod * CROWDED_GROWTH_SHARE;
    this.#crowdedMs = heartbeatPeriod * BEHIND_SHARE_OF_PERIOD;
    // As the lone heartbeats' estimate: a reply later than a period is most likely this process's doing.
    this.#roundTrip = new RoundTripEstimate(heartbeatPeriod);
    this.#size = Math.min(largest, FIRST);
  }

  /** Most heartbeats in the next batch. */
  get size(): number {
    return this.#remeasuring && this.#smallest !== undefined ? this.#smallest.size : this.#size;
  }

  /** A batch of `sent` heartbeats goes out now. */
  sending(sent: number): void {
    if (this.#remeasuring && sent <= (this.#smallest?.size ?? 0)) this.#remeasuring = false;
  }

  /** How long an answered batch takes, and how long a slow one took of late, in ms; 0 until one was answered. */
  get roundTrip(): Pick<RoundTripEstimate, 'estimate' | 'slow'> {
    return this.#roundTrip;
  }

  /**
   * A batch of `sent` heartbeats was answered after `roundTripMs`, when the
   * longest a due heartbeat has waited to be sent is `overdueMs`.
   */
  answered(sent: number, roundTripMs: number, overdueMs: number): void {
    this.#roundTrip.add(roundTripMs);
    const now = this.#clock.now();
    const sizeFree = this.#sizeFree(sent, roundTripMs, now);
    if (overdueMs > this.#crowdedMs) this.#crowdedAt = now;
    // Only a full batch says that a larger one would also have been answered as soon.
    const full = sent >= this.#size;
    if (roundTripMs > this.#nearBoundMs) this.#shrink(sent);
    else if (now - this.#crowdedAt <= this.#periodMs) {
      if (full && sizeFree && roundTripMs <= this.#crowdedGrowthMs) this.#size = Math.min(this.#largest, this.#size + 1);
      // Growth compares with the smallest batches: a round trip of theirs measured before the server slowed would stop it for good.
      const smallest = this.#smallest as Smallest;
      if (now - smallest.answeredAt > this.#periodMs && smallest.size < this.#size && this.#size < this.#largest) this.#remeasuring = true;
    } else if (roundTripMs > this.#slowMs) this.#shrink(sent);
    else if (full && roundTripMs <= this.#slowMs / 2) this.#size = Math.min(this.#largest, this.#doubling ? this.#size * 2 : this.#size + 1);
  }

  /** A batch of `sent` heartbeats got no answer within its attempt. */
  unanswered(sent: number): void {
    this.#shrink(sent);
  }

  /** Learns how long the smallest batches take (afresh after a period without one), and whether this one took nearly as long. */
  #sizeFree(sent: number, roundTripMs: number, now: number): boolean {
    const smallest = this.#smallest;
    if (smallest === undefined || sent < smallest.size || (sent === smallest.size && now - smallest.answeredAt > this.#periodMs)) {
      this.#smallest = { size: sent, roundTrip: new RoundTripEstimate(this.#periodMs), answeredAt: now };
    }
    const reference = this.#smallest as Smallest;
    if (sent === reference.size) {
      reference.roundTrip.add(roundTripMs);
      reference.answeredAt = now;
    }
    return roundTripMs <= reference.roundTrip.estimate() * SIZE_FREE_RATIO;
  }

  #shrink(sent: number): void {
    this.#doubling = false;
    this.#size = Math.min(this.#size, Math.max(SMALLEST, Math.floor(sent / 2)));
  }
}
