/**
 * Timers for the delays an operator can ask for: Node's timers take at most
 * 2^31−1 ms (about 24.8 days) and fire after 1 ms when given more, so a
 * `--timeout 600h` or a Java holder's 30-day lease would end at once. A
 * longer delay is waited out in steps, on the monotonic clock.
 */
import type { Deadline } from '../primitives/deadline.js';
import { MAX_DURATION_MS } from '../settings/options.js';

export interface LongTimer {
  /** Safe to call twice, and after the timer fired. */
  clear(): void;
}

/** Calls `callback` once `ms` milliseconds have passed; `unref`: the timer does not keep the process alive. */
export function setLongTimeout(callback: () => void, ms: number, options: { unref?: boolean } = {}): LongTimer {
  const dueAt = performance.now() + ms;
  let timer: NodeJS.Timeout;
  const arm = (): void => {
    const left = dueAt - performance.now();
    timer = setTimeout(left > MAX_DURATION_MS ? arm : callback, Math.min(MAX_DURATION_MS, Math.max(0, Math.ceil(left))));
    if (options.unref === true) timer.unref();
  };
  arm();
  return { clear: () => clearTimeout(timer) };
}

/** A signal that aborts after `ms`, however long; `clear()` when the work it bounds is done. */
export function longDeadline(ms: number): Deadline {
  const controller = new AbortController();
  const timer = setLongTimeout(() => controller.abort(new DOMException(`Deadline of ${ms} ms exceeded`, 'TimeoutError')), ms, { unref: true });
  return { signal: controller.signal, clear: () => timer.clear() };
}
