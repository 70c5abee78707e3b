/**
 * Waiting for work that others may be waiting for too (a check shared by
 * concurrent calls): one caller's abort ends its own wait, never the work.
 */

/**
 * `promise`, or a rejection the moment `signal` aborts, with what `aborted`
 * makes of the signal's reason (by default the reason itself).
 */
export function raceAbort<T>(
  promise: Promise<T>,
  signal: AbortSignal | undefined,
  aborted: (reason: unknown) => unknown = (reason) => reason,
): Promise<T> {
  if (signal === undefined) return promise;
  if (signal.aborted) return Promise.reject(aborted(signal.reason));
  return new Promise<T>((resolve, reject) => {
    const onAbort = (): void => reject(aborted(signal.reason));
    signal.addEventListener('abort', onAbort, { once: true });
    promise.then(resolve, reject).finally(() => signal.removeEventListener('abort', onAbort));
  });
}
