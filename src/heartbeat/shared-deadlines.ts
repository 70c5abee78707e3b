/**
 * Deadline signals shared by the heartbeats whose deadlines fall in the same
 * short slot. A heartbeat needs a signal that cuts its request off in time,
 * but an AbortController and a timer of its own for every heartbeat cost more
 * CPU than the rest of the library's part of a heartbeat (on Node 20 every
 * AbortSignal gets its own hidden class); with thousands of locks that CPU is
 * taken from the requests themselves. A slot's signal aborts at the slot's
 * start, so a shared deadline is early by less than a slot, never late.
 */
import { setMaxListeners } from 'node:events';
import type { MonotonicClock } from '../clock.js';
import { deadline, type Deadline } from '../deadline.js';

/** Slots are this long; a deadline this far away or closer gets a signal of its own. */
const SLOT_MS = 50;
/** Sharing only pays off when a slot is small next to the time allowed. */
const SHARE_FROM_MS = 20 * SLOT_MS;

/** Other heartbeats may still be bounded by a slot's timer; it goes when it fires. */
const keepSharedTimer = (): void => undefined;

export class SharedDeadlines {
  readonly #clock: MonotonicClock;
  /** Slot number (start time / SLOT_MS) to the deadline its timer aborts. */
  readonly #slots = new Map<number, Deadline>();

  constructor(clock: MonotonicClock) {
    this.#clock = clock;
  }

  /** A deadline whose signal aborts with a `TimeoutError` `ms` from now, or at most a slot sooner. */
  deadline(ms: number): Deadline {
    if (ms < SHARE_FROM_MS) return deadline(ms);
    const slot = Math.floor((this.#clock.now() + ms) / SLOT_MS);
    return this.#slots.get(slot) ?? this.#open(slot);
  }

  /** Timers not yet fired; they never keep the process alive. */
  get size(): number {
    return this.#slots.size;
  }

  #open(slot: number): Deadline {
    const controller = new AbortController();
    // Every request in flight with this deadline listens to it.
    setMaxListeners(0, controller.signal);
    const shared: Deadline = { signal: controller.signal, clear: keepSharedTimer };
    this.#slots.set(slot, shared);
    const timer = setTimeout(
      () => {
        this.#slots.delete(slot);
        controller.abort(new DOMException('Heartbeat deadline exceeded', 'TimeoutError'));
      },
      Math.max(1, slot * SLOT_MS - this.#clock.now()),
    );
    timer.unref();
    return shared;
  }
}
