/** A call a client runs on the caller's behalf, which ends when the caller's signal aborts or the client closes. */
import { LockClientClosedError } from '../base/errors.js';
import { childAbortController } from './child-abort-controller.js';

/**
 * Runs `run` with a signal that aborts when `signal` does, or with
 * `LockClientClosedError` when the client's `lifetime` ends; once that
 * signal has aborted, the call rejects with its reason, whatever `run`
 * rejected with.
 */
export async function runWithinLifetime<T>(
  lifetime: AbortSignal,
  signal: AbortSignal | undefined,
  run: (signal: AbortSignal) => Promise<T>,
): Promise<T> {
  if (lifetime.aborted) throw new LockClientClosedError();
  const call = childAbortController(signal);
  const onClose = (): void => call.abort(new LockClientClosedError());
  lifetime.addEventListener('abort', onClose, { once: true });
  try {
    return await run(call.signal);
  } catch (error) {
    throw call.signal.aborted ? call.signal.reason : error;
  } finally {
    lifetime.removeEventListener('abort', onClose);
    call.dispose();
  }
}
