/**
 * Deadline signals shared by the heartbeats whose deadlines fall in the same
 * short slot. A heartbeat needs a signal that cuts its request off in time,
 * but an AbortController and a timer of its own for every heartbeat cost more
 * CPU than the rest of the library's part of a heartbeat (on Node 20 every
 * AbortSignal gets its own hidden class); with thousands of locks that CPU is
 * taken from the requests themselves. A slot's signal aborts at the slot's
 * start, so a shared deadline is early by less than a slot, never late; a
 * slot is at most a twentieth of the time allowed.
 */
import { setMaxListeners } from 'node:events';
import type { MonotonicClock } from '../base/clock.js';
import { deadline, type Deadline } from '../primitives/deadline.js';

/**
 * Slot lengths, longest first, each used for deadlines at least twenty times
 * as far away. The short slots matter under overload, when most heartbeats
 * start with well under a second of safe time left.
 */
const SLOTS_MS = [50, 5];
const SLOT_SHARE = 20;

/** Other heartbeats may still be bounded by a slot's timer; it goes when it fires. */
const keepSharedTimer = (): void => undefined;

export class SharedDeadlines {
  readonly #clock: MonotonicClock;
  /**
   * Abort time (a whole multiple of its slot length, in ms) to the deadline
   * its timer aborts. Slots of different lengths that end at the same moment
   * are the same deadline.
   */
  readonly #slots = new Map<number, Deadline>();

  constructor(clock: MonotonicClock) {
    this.#clock = clock;
  }

  /** A deadline whose signal aborts with a `TimeoutError` `ms` from now, or at most a twentieth of `ms` sooner. */
  deadline(ms: number): Deadline {
    const slotMs = SLOTS_MS.find((length) => ms >= SLOT_SHARE * length);
    if (slotMs === undefined) return deadline(ms);
    const abortAt = Math.floor((this.#clock.now() + ms) / slotMs) * slotMs;
    return this.#slots.get(abortAt) ?? this.#open(abortAt);
  }

  /** Timers not yet fired; they never keep the process alive. */
  get size(): number {
    return this.#slots.size;
  }

  #open(abortAt: number): Deadline {
    const controller = new AbortController();
    // Every request in flight with this deadline listens to it.
    setMaxListeners(0, controller.signal);
    const shared: Deadline = { signal: controller.signal, clear: keepSharedTimer };
    this.#slots.set(abortAt, shared);
    const timer = setTimeout(
      () => {
        this.#slots.delete(abortAt);
        controller.abort(new DOMException('Heartbeat deadline exceeded', 'TimeoutError'));
      },
      Math.max(1, abortAt - this.#clock.now()),
    );
    timer.unref();
    return shared;
  }
}
