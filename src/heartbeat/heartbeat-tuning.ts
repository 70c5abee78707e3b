/**
 * Every ratio that tunes the heartbeats, in one place, each with its reason.
 * They are derived from two options (`heartbeatPeriod`, `heartbeatConcurrency`)
 * rather than options of their own: each follows from the period or the
 * concurrency, and a user who changes those gets ratios that still fit.
 */

/** A lock's first heartbeat is due up to this share of a period early (never late), so that locks taken together drift apart for good. */
export const FIRST_HEARTBEAT_JITTER = 0.1;

/**
 * Heartbeats count as behind (and acquisitions are held back) once a due
 * heartbeat has waited this share of a period to be sent: well above the
 * wait for a fuller batch, well below the safety margin.
 */
export const BEHIND_SHARE_OF_PERIOD = 1 / 20;

/**
 * A heartbeat's usual round trip is the quickest of the last 4 to 8
 * periods, known once 4 have passed; a reply counts as late beyond it.
 * Long enough that while acquisitions are held back, a heartbeat answered
 * as quickly as before the burst comes along; short enough that a server
 * slower for good (a route changed) is the usual one again within a
 * minute by default.
 */
export const USUAL_ROUND_TRIP_WINDOW_PERIODS = 4;

/**
 * The longest a due heartbeat waits for a fuller batch, as a share of the
 * period (100 ms by default): well under the share at which heartbeats count
 * as behind.
 */
export const BATCH_WAIT_SHARE_OF_PERIOD = 1 / 50;

/**
 * A heartbeat batch answered later than this share of a period was too
 * large for the server's pace (heartbeat-batch-pace.ts): the lag the
 * benchmarks allow a heartbeat, and well inside the period after which its
 * locks are due again.
 */
export const SLOW_BATCH_SHARE_OF_PERIOD = 1 / 4;

/**
 * A batch leaves its locks a lone retry's room only where lone heartbeats
 * are answered at least this many times as fast as batches (DynamoDB Local
 * applying a batch's statements in line under load): where they are not
 * (a far region, a server slow for every request), a lone retry would be
 * no surer, and a batch is a lock's last chance as a lone attempt is.
 */
export const LONE_QUICKER_RATIO = 2;

/** What an attempt needs, in round trips of a slow heartbeat of late: a retry's new connection and its request. */
const ROUND_TRIPS_PER_ATTEMPT = 2;

/** The least share of the safe time left that an attempt leaves to its retries: a stuck request costs two thirds at most. */
const RETRY_SHARE_OF_SAFE_TIME = 1 / 3;

/** The backoff before the first retry of a failed heartbeat (randomized 1–2×): a tenth of a period, at most 100 ms. */
function firstRetryBackoffMs(heartbeatPeriod: number): number {
  return Math.min(100, heartbeatPeriod / 10);
}

/**
 * What an attempt leaves to a retry, in ms, with `safeTimeLeftMs` of safe
 * time left and `slowRoundTripMs` what a slow lone heartbeat took of late:
 * the longest first backoff and two such round trips, and at least a third
 * of the safe time, since the round trips of a new client or a quiet server
 * say little of a busy one.
 */
function retryRoomMs(heartbeatPeriod: number, safeTimeLeftMs: number, slowRoundTripMs: number): number {
  const measured = 2 * firstRetryBackoffMs(heartbeatPeriod) + ROUND_TRIPS_PER_ATTEMPT * slowRoundTripMs;
  return Math.max(measured, safeTimeLeftMs * RETRY_SHARE_OF_SAFE_TIME);
}

/**
 * The longest a lone attempt waits for its answer, in ms, with
 * `safeTimeLeftMs` of safe time left and `slowRoundTripMs` what a slow lone
 * heartbeat took of late: all of the safe time but the room a retry needs,
 * so that a request stuck on a dead connection leaves time for one; and all
 * of it where the safe time does not hold a retry and as much before it,
 * since only an answer can keep the lock then. An answer the safe time
 * allows is waited for, however much longer than a period it takes.
 */
export function attemptBoundMs(heartbeatPeriod: number, safeTimeLeftMs: number, slowRoundTripMs: number): number {
  const retryMs = retryRoomMs(heartbeatPeriod, safeTimeLeftMs, slowRoundTripMs);
  return safeTimeLeftMs >= 2 * retryMs ? safeTimeLeftMs - retryMs : safeTimeLeftMs;
}

/**
 * The longest a batch attempt waits for its answer, in ms, with
 * `safeTimeLeftMs` the least safe time of its locks and `slowRoundTripMs`
 * what a slow lone heartbeat took of late: never all of the safe time, which
 * is a lone attempt's last resort. Each lock keeps the room a lone retry
 * needs, whatever the batch does: a server may apply a batch far more
 * slowly than a lone write (DynamoDB Local applies its statements in line
 * with every other write), and a lock must not stake its last chance on
 * one. Negative when the safe time holds no batch at all.
 */
export function batchAttemptBoundMs(heartbeatPeriod: number, safeTimeLeftMs: number, slowRoundTripMs: number): number {
  return safeTimeLeftMs - retryRoomMs(heartbeatPeriod, safeTimeLeftMs, slowRoundTripMs);
}

/**
 * The pause before the next attempt after `failures` failed ones in a row
 * (at least 1): a tenth of a period, at most 100 ms, doubling with each
 * failure, randomized 1–2× by `random` in [0, 1) so that locks failed
 * together spread out; never above a quarter of a period or a second, the
 * pause after a failure that is not worth retrying soon (not transient).
 * Soon, since the safe time runs, and never in a tight loop; and never so
 * late that the next attempt would not get its round trips within the
 * `safeTimeLeftMs`.
 */
export function retryBackoffMs(
  heartbeatPeriod: number,
  failure: { readonly failures: number; readonly transient: boolean; readonly random: number },
  safeTimeLeftMs: number,
  slowRoundTripMs: number,
): number {
  const longest = Math.min(heartbeatPeriod / 4, 1_000);
  const backoff = failure.transient
    ? Math.min(longest, firstRetryBackoffMs(heartbeatPeriod) * 2 ** (failure.failures - 1) * (1 + failure.random))
    : longest;
  return Math.max(0, Math.min(backoff, safeTimeLeftMs - ROUND_TRIPS_PER_ATTEMPT * slowRoundTripMs));
}

/** A held lock's signal lags a host's resume by at most a heartbeat period, and never more than a second. */
export function suspendCheckIntervalMs(heartbeatPeriod: number): number {
  return Math.min(heartbeatPeriod, 1_000);
}
