/**
 * Notices time the monotonic clock did not count: while a host or VM is
 * suspended, `performance.now()` stands still and every timer with it, so
 * after resume nothing of the scheduler would run before the monotonic time
 * still due has passed, while other clients' leases ran on. One cheap timer
 * per client compares the two clocks; when the wall clock got ahead, every
 * held lock is checked against its safe time at once.
 */
import type { MonotonicClock } from '../base/clock.js';

/** Wall-clock time gained over the monotonic clock between two ticks that counts as a suspend. */
const JUMP_MS = 100;

export class SuspendWatch {
  readonly #clock: MonotonicClock & { wallNow(): number };
  readonly #intervalMs: number;
  readonly #onResume: () => void;
  #timer: NodeJS.Timeout | undefined;
  #watching = false;
  #lastNow = 0;
  #lastWall = 0;

  /** `clock` without a wall clock: the watch never runs. */
  constructor(clock: MonotonicClock, intervalMs: number, onResume: () => void) {
    this.#clock = clock as MonotonicClock & { wallNow(): number };
    this.#intervalMs = intervalMs;
    this.#onResume = onResume;
  }

  /**
   * Runs while `watching` is true (a client watches only while it holds
   * locks). It stops at its next tick rather than at once, so that a client
   * taking and releasing one lock after another keeps one timer.
   */
  set watching(watching: boolean) {
    if (this.#clock.wallNow === undefined) return;
    this.#watching = watching;
    if (!watching || this.#timer !== undefined) return;
    this.#lastNow = this.#clock.now();
    this.#lastWall = this.#clock.wallNow();
    this.#timer = setInterval(() => this.#tick(), this.#intervalMs);
    this.#timer.unref();
  }

  /** Stops the timer now (the client closes). */
  stop(): void {
    this.#watching = false;
    clearInterval(this.#timer);
    this.#timer = undefined;
  }

  #tick(): void {
    if (!this.#watching) {
      this.stop();
      return;
    }
    const now = this.#clock.now();
    const wall = this.#clock.wallNow();
    const gained = wall - this.#lastWall - (now - this.#lastNow);
    this.#lastNow = now;
    this.#lastWall = wall;
    if (gained > JUMP_MS) this.#onResume();
  }
}
