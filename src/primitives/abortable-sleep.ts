/**
 * Waits `ms` milliseconds; rejects with `signal.reason` the moment the signal
 * aborts. The timer is cleared on abort so nothing outlives the wait. With
 * `unref`, the wait does not keep the process alive (background work).
 */
export function abortableSleep(ms: number, signal?: AbortSignal, options: { unref?: boolean } = {}): Promise<void> {
  if (signal?.aborted) return Promise.reject(signal.reason);
  return new Promise((resolve, reject) => {
    const onAbort = (): void => {
      clearTimeout(timer);
      reject(signal?.reason);
    };
    const timer = setTimeout(
      () => {
        signal?.removeEventListener('abort', onAbort);
        resolve();
      },
      Math.max(0, ms),
    );
    if (options.unref === true) timer.unref();
    signal?.addEventListener('abort', onAbort, { once: true });
  });
}
