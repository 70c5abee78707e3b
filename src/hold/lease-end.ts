/**
 * A lock bounded by the end of the process that holds it (acquisition
 * option `invocationDeadline`): a serverless invocation, say, which the
 * platform stops at a known moment. Each write of such a lock states a
 * lease counted from this process's monotonic clock as the write leaves:
 * never more than the lease it would state anyway, and never past the
 * deadline plus the platform's kill overrun. A waiter of either language
 * times that lease from when it first saw the write's RVN, so a holder
 * stopped at its deadline is taken over about then, not a configured lease
 * after its last heartbeat, and no clock is compared (RELIABILITY.md,
 * "A lease bounded by the invocation"). The safe time ends a safety margin
 * before the deadline, so that an act checked at its last moment is done
 * before the platform stops the process. Pure: the clock is read by the
 * callers.
 */
import type { MonotonicClock } from '../base/clock.js';
import { InvalidArgumentError } from '../base/errors.js';
import { LeaseRestatement } from '../dynamodb/lease-restatement.js';
import { LEASE_END_DEFAULTS } from '../settings/defaults.js';
import { MAX_DURATION_MS, checkDuration } from '../settings/options.js';

/**
 * When the process holding the lock will be stopped: `remainingMs` from now
 * (Lambda's `context.getRemainingTimeInMillis()`), or `at`, a time on the
 * client's monotonic clock (`performance.now()` unless the client was given
 * another clock). `killOverrunMs`: how long past that moment the process may
 * still run before it is certainly gone.
 */
export type InvocationDeadline =
  | { readonly remainingMs: number; readonly at?: undefined; readonly killOverrunMs?: number }
  | { readonly at: number; readonly remainingMs?: undefined; readonly killOverrunMs?: number };

export class LeaseEnd {
  /** Monotonic time at which the process is stopped. */
  readonly deadline: number;
  readonly killOverrunMs: number;
  /** The latest end of the lock's safe time: a safety margin before the deadline. */
  readonly safeUntil: number;

  constructor(deadline: number, killOverrunMs: number, safetyMarginMs: number) {
    this.deadline = deadline;
    this.killOverrunMs = killOverrunMs;
    this.safeUntil = deadline - safetyMarginMs;
  }

  /**
   * The lease a write that would state `leaseMs` states when it leaves at
   * `now`: whole milliseconds, so that it ends no later than the deadline
   * plus the kill overrun, counted from `now`.
   */
  leaseAt(leaseMs: number, now: number): number {
    return Math.max(0, Math.min(leaseMs, Math.floor(this.deadline + this.killOverrunMs - now)));
  }

  /**
   * What states a write's lease again as each of its attempts leaves, the
   * SDK's retries included (lease-restatement.ts): {@link leaseAt} of
   * `leaseMs`, read on `clock` at that moment.
   */
  restatement(leaseMs: number, clock: MonotonicClock): LeaseRestatement {
    return new LeaseRestatement((now) => this.leaseAt(leaseMs, now), clock);
  }

  /** Why a lock ends at {@link safeUntil}. */
  reason(): string {
    return `its holder's invocation ends ${Math.round(this.deadline - this.safeUntil)} ms after its safe time (invocationDeadline)`;
  }
}

/**
 * Checks `given` and turns it into the bound of a lock acquired `now` whose
 * lease is `leaseMs` and safety margin `safetyMarginMs`. The deadline must
 * leave the lock some safe time: it must be more than the safety margin away.
 * @throws InvalidArgumentError `INVALID_DEADLINE` when `given` is malformed,
 *   `DEADLINE_TOO_SOON` when it is past or within the safety margin.
 */
export function leaseEndOf(given: InvocationDeadline, now: number, safetyMarginMs: number): LeaseEnd {
  if (typeof given !== 'object' || given === null) throw invalid(`an object, got ${String(given)}`);
  const { remainingMs, at } = given;
  if ((remainingMs === undefined) === (at === undefined)) throw invalid('exactly one of remainingMs and at');
  const value: unknown = remainingMs ?? at;
  if (typeof value !== 'number' || !Number.isFinite(value)) throw invalid(`a finite number of milliseconds, got ${String(value)}`);
  const deadline = remainingMs === undefined ? value : now + value;
  if (deadline - now > MAX_DURATION_MS) throw invalid(`at most ${MAX_DURATION_MS} ms away, got ${Math.round(deadline - now)} ms`);
  const killOverrunMs = checkDuration('invocationDeadline.killOverrunMs', given.killOverrunMs ?? LEASE_END_DEFAULTS.killOverrunMs);
  if (deadline - now <= safetyMarginMs) {
    throw new InvalidArgumentError(
      'DEADLINE_TOO_SOON',
      `invocationDeadline is ${Math.round(deadline - now)} ms away; a lock needs more than its safety margin (${safetyMarginMs} ms) of it`,
    );
  }
  return new LeaseEnd(deadline, killOverrunMs, safetyMarginMs);
}

function invalid(expected: string): InvalidArgumentError {
  return new InvalidArgumentError('INVALID_DEADLINE', `invocationDeadline must be ${expected}`);
}
