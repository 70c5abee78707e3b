/**
 * The smallest value seen lately: over the current window and the one
 * before it, so between one and two windows back. A low that old is
 * forgotten, so the minimum follows a baseline that moved up for good,
 * and drops at once when a lower value comes. It is known only once a
 * whole window with values in it has passed: the first values seen may
 * all be high for a passing reason.
 */
import type { MonotonicClock } from '../base/clock.js';

export class RecentMinimum {
  readonly #clock: MonotonicClock;
  readonly #windowMs: number;
  #windowStart: number;
  #current = Infinity;
  #previous = Infinity;

  constructor(clock: MonotonicClock, windowMs: number) {
    this.#clock = clock;
    this.#windowMs = windowMs;
    this.#windowStart = clock.now();
  }

  add(value: number): void {
    this.#turn();
    // The first value seen, or the first after a whole window without one, starts a window of its
    // own, so that a whole window of values passes before the minimum is known, wherever they begin.
    if (this.#current === Infinity && this.#previous === Infinity) this.#windowStart = this.#clock.now();
    if (value < this.#current) this.#current = value;
  }

  /** The smallest value seen in the last one to two windows; undefined until the window before this one had a value. */
  get value(): number | undefined {
    this.#turn();
    return this.#previous === Infinity ? undefined : Math.min(this.#current, this.#previous);
  }

  /** Starts a new window once the current one is over; a window with no value seen leaves none behind. */
  #turn(): void {
    const elapsed = this.#clock.now() - this.#windowStart;
    if (elapsed < this.#windowMs) return;
    this.#previous = elapsed < 2 * this.#windowMs ? this.#current : Infinity;
    this.#current = Infinity;
    this.#windowStart += Math.floor(elapsed / this.#windowMs) * this.#windowMs;
  }
}
