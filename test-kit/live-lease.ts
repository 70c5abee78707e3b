/**
 * Lock client settings for holders that are not what a test is about, in
 * tests that run beside others on a loaded machine, where a jest worker can
 * stall for over a second: a holder on a 1 s lease with 250 ms heartbeats is
 * lost after about 0.65 s without a confirmed write.
 */

/** The lease of a live holder that others wait on, poll or watch: its heartbeats keep it through such a stall. */
export const LIVE_LEASE_MS = 3_000;

/** For a client that takes a lock and then compares it with the table: no heartbeat moves its RVN in between, and it does not lapse meanwhile. */
export const STILL = Object.freeze({ leaseDuration: 20_000, backgroundHeartbeats: false });
