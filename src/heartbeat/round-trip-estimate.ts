/**
 * How long a heartbeat takes, from send to confirmation: an exponentially
 * weighted moving average, so it follows a server that slows down under load
 * within a few dozen heartbeats, while one slow reply barely moves it; and
 * how long a slow one took of late, which a slower reply raises at once and
 * faster ones lower as slowly as they move the average.
 */
const WEIGHT_OF_NEWEST = 0.1;

export class RoundTripEstimate {
  readonly #longestSampleMs: number;
  #averageMs = 0;
  #slowMs = 0;
  #samples = 0;

  /**
   * `longestSampleMs`: a reply seen later than that counts as that long.
   * Most such replies were held up by this process (stopped, or too busy
   * to run its timers), not by the server, and one of them would weigh on
   * the estimate for dozens of heartbeats.
   */
  constructor(longestSampleMs = Infinity) {
    this.#longestSampleMs = longestSampleMs;
  }

  add(sampleMs: number): void {
    const ms = Math.min(sampleMs, this.#longestSampleMs);
    this.#averageMs = this.#samples === 0 ? ms : this.#averageMs + WEIGHT_OF_NEWEST * (ms - this.#averageMs);
    this.#slowMs = Math.max(ms, this.#slowMs + WEIGHT_OF_NEWEST * (ms - this.#slowMs));
    this.#samples++;
  }

  /** Milliseconds; 0 until a heartbeat has been confirmed. */
  estimate(): number {
    return this.#averageMs;
  }

  /** What a slow heartbeat took of late, in ms; 0 until a heartbeat has been confirmed. */
  slow(): number {
    return this.#slowMs;
  }
}
