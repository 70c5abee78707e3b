/**
 * A signal that aborts after `ms` (at least 1, rounded up). Call `clear()`
 * when the work it bounds is done, so no timer outlives it; the timer never
 * keeps the process alive either way.
 */
export interface Deadline {
  readonly signal: AbortSignal;
  clear(): void;
}

export function deadline(ms: number): Deadline {
  const controller = new AbortController();
  const timer = setTimeout(
    () => controller.abort(new DOMException(`Deadline of ${Math.ceil(ms)} ms exceeded`, 'TimeoutError')),
    Math.max(1, Math.ceil(ms)),
  );
  timer.unref();
  return { signal: controller.signal, clear: () => clearTimeout(timer) };
}
