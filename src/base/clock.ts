/**
 * Lease arithmetic runs on a monotonic clock only. A wall clock (`Date.now()`)
 * can step backwards or forwards and would shorten or stretch leases; the
 * protocol never compares clocks across machines, only elapsed time on one.
 */
export interface MonotonicClock {
  /** Milliseconds since an arbitrary origin; never decreases. */
  now(): number;
  /**
   * Wall-clock milliseconds (`Date.now()`), read only to notice time the
   * monotonic clock did not count (a suspended host): it can shorten a
   * lock's safe time, never lengthen it. A clock without it skips that check.
   */
  wallNow?(): number;
}

export const systemClock: MonotonicClock = Object.freeze({ now: () => performance.now(), wallNow: () => Date.now() });
