/** The options of `acquirePermit` and `acquirePermits`, and their checks before any request. */
import { InvalidArgumentError } from '../base/errors.js';
import type { AcquireLockOptions } from '../acquire/acquire-options.js';
import { maxGroupSize } from '../protocol/index.js';
import { checkSignal } from '../settings/argument-checks.js';
import { ACQUIRE_DEFAULTS } from '../settings/defaults.js';
import { checkCount, checkDuration, checkRefreshPeriod } from '../settings/options.js';
import { PERMITS_ATTRIBUTE } from './permit-keys.js';

/** The most permits a semaphore may count: a waiting round reads each of them, and the one past the last. */
export const MAX_PERMITS = 1000;

/**
 * Options of `acquirePermit`: those of `acquireLock` that make sense for a
 * permit, and the semaphore's number of permits. The waits count from the
 * longest lease a holder of a permit advertised.
 */
export interface AcquirePermitOptions extends Pick<
  AcquireLockOptions,
  | 'sortKey'
  | 'data'
  | 'deleteLockOnRelease'
  | 'refreshPeriod'
  | 'additionalTimeToWaitForLock'
  | 'leaseDuration'
  | 'additionalAttributes'
  | 'shouldSkipBlockingWait'
  | 'signal'
> {
  /** How many permits the semaphore has (1 to 1000). Every client of one semaphore must pass the same number. */
  readonly permits: number;
}

/** Options of `acquirePermits`: those of `acquirePermit`, and how many permits to take, all or none. */
export interface AcquirePermitsOptions extends AcquirePermitOptions {
  /** How many permits to take together, from 1 to `permits` (and to the most keys one transaction takes). */
  readonly count: number;
}

/** Every option `acquirePermit` takes, by name. */
export const ACQUIRE_PERMIT_OPTION_NAMES: Readonly<Record<keyof AcquirePermitOptions, true>> = {
  permits: true,
  sortKey: true,
  data: true,
  deleteLockOnRelease: true,
  refreshPeriod: true,
  additionalTimeToWaitForLock: true,
  leaseDuration: true,
  additionalAttributes: true,
  shouldSkipBlockingWait: true,
  signal: true,
};

/** Every option `acquirePermits` takes, by name. */
export const ACQUIRE_PERMITS_OPTION_NAMES: Readonly<Record<keyof AcquirePermitsOptions, true>> = { ...ACQUIRE_PERMIT_OPTION_NAMES, count: true };

export interface ResolvedPermitOptions extends AcquirePermitsOptions {
  readonly refreshPeriod: number;
  readonly additionalTimeToWaitForLock: number;
}

/** Checks a call's options against its client (`fenced`: with a fencing table, a transaction takes half as many locks). */
export function resolvePermitOptions(options: AcquirePermitsOptions, fenced: boolean): ResolvedPermitOptions {
  const permits = checkCount('permits', options.permits, { max: MAX_PERMITS });
  const most = Math.min(permits, maxGroupSize(fenced));
  checkCount(`count (of a semaphore of ${permits} permits${fenced ? ', fenced' : ''})`, options.count, { max: most });
  checkSignal('signal', options.signal);
  if (options.additionalAttributes !== undefined && PERMITS_ATTRIBUTE in options.additionalAttributes) {
    throw new InvalidArgumentError(
      'RESERVED_ATTRIBUTE',
      `${PERMITS_ATTRIBUTE} is written by the semaphore itself: it carries its number of permits`,
    );
  }
  const wait = { allowInfinity: true };
  return {
    ...options,
    refreshPeriod: checkRefreshPeriod(options.refreshPeriod ?? ACQUIRE_DEFAULTS.refreshPeriod),
    additionalTimeToWaitForLock: checkDuration(
      'additionalTimeToWaitForLock',
      options.additionalTimeToWaitForLock ?? ACQUIRE_DEFAULTS.additionalTimeToWaitForLock,
      wait,
    ),
  };
}
