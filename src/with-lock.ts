/**
 * `client.withLock`: a routine run while a lock is held, under a signal that
 * aborts when the lock can no longer be trusted or the caller aborts, and
 * the lock released after it whatever happens: one attempt, bounded by
 * `releaseTimeout`; if that fails, the lock lapses after its lease.
 */
import type { Logger } from './base/logger.js';
import type { Lock, ReleaseLockOptions } from './lock.js';
import type { LockKeyOptions } from './lock-client-options.js';
import { ACQUIRE_LOCK_OPTION_NAMES, type AcquireLockOptions } from './acquire/acquire-options.js';
import { childAbortController } from './primitives/child-abort-controller.js';
import { deadline } from './primitives/deadline.js';
import { checkFunction, checkOptionNames } from './settings/argument-checks.js';
import { WITH_LOCK_DEFAULTS } from './settings/defaults.js';
import { checkDuration } from './settings/options.js';

export interface WithLockOptions extends AcquireLockOptions, LockKeyOptions {
  /** Milliseconds the release after the routine may take; it is not retried. @default 5000 */
  readonly releaseTimeout?: number;
}

/** Every option `withLock` takes, by name. */
const WITH_LOCK_OPTION_NAMES: Readonly<Record<keyof WithLockOptions, true>> = { ...ACQUIRE_LOCK_OPTION_NAMES, releaseTimeout: true };

/** What of the client `withLock` uses. */
export interface Locking {
  acquireLock(partitionKey: string, options: AcquireLockOptions & LockKeyOptions): Promise<Lock>;
  releaseLock(lock: Lock, options: ReleaseLockOptions): Promise<boolean>;
  readonly logger: Logger | undefined;
}

export async function withLock<T>(
  locking: Locking,
  partitionKey: string,
  routine: (signal: AbortSignal, lock: Lock) => Promise<T> | T,
  options: WithLockOptions,
): Promise<T> {
  checkFunction('withLock: routine', routine);
  const { releaseTimeout: given, ...acquiring } = checkOptionNames('withLock', options, WITH_LOCK_OPTION_NAMES);
  const releaseTimeout = checkDuration('releaseTimeout', given ?? WITH_LOCK_DEFAULTS.releaseTimeout, { min: 1 });
  const lock = await locking.acquireLock(partitionKey, acquiring);
  const scope = childAbortController(lock.signal);
  const onCallerAbort = (): void => scope.abort(options.signal?.reason);
  options.signal?.addEventListener('abort', onCallerAbort, { once: true });
  try {
    return await routine(scope.signal, lock);
  } finally {
    options.signal?.removeEventListener('abort', onCallerAbort);
    scope.dispose();
    const bound = deadline(releaseTimeout);
    await locking
      .releaseLock(lock, { bestEffort: true, signal: bound.signal }) // nobody releases it again: if this fails, it lapses
      .catch((error: unknown) => {
        locking.logger?.warn({ err: error, partitionKey }, 'withLock: release failed; the lock will lapse after its lease');
      })
      .finally(() => bound.clear());
  }
}
