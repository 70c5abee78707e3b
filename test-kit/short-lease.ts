/**
 * Lock client settings for tests that check an order of events rather than
 * real time: waiting out a lease costs two seconds, and the heartbeat period
 * stays well above what a loaded two-core machine's scheduling delays (a
 * period of a few tens of milliseconds would lose locks to the machine).
 */
export const SHORT_LEASE = Object.freeze({ leaseDuration: 2_000, heartbeatPeriod: 500 });
