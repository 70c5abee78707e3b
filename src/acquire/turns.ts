/**
 * Turns: how a client shares a lock it releases and asks for again at once.
 *
 * Waiters learn that a lock came free only by reading it, once per refresh
 * period. A client that releases a lock and asks for it again straight away
 * takes it back with one write, long before any waiter's next read; left
 * alone, it keeps the lock for as long as it keeps asking, and the others
 * starve.
 *
 * So the back-to-back holds of one lock by one client form a turn: each
 * acquisition that starts within a refresh period of this client's release
 * of the lock goes on with the turn. Once the turn has lasted its length,
 * the next back-to-back acquisition stands aside: it sends nothing until one
 * refresh period after the release, then reads the lock as any waiter does.
 * Every waiter, Java's included, reads the lock at least once in that
 * period, finds it free, and the first to read takes it. Nothing on the
 * wire changes, only when this client asks.
 *
 * A holder cannot see who waits. When nobody took the lock while it stood
 * aside, likely nobody was waiting: its turns on the lock last twice as
 * long from then on, up to MAX_TURN_GROWTH times `turnLength`, so that a
 * lone client stands aside ever more rarely. Once it waits for another
 * holder, its turns are back to `turnLength`, and they grow only once it has
 * not waited for another holder for CONTENTION_MEMORY_IN_TURNS turns.
 */
import type { MonotonicClock } from '../base/clock.js';
import type { AcquireLockOptions, ResolvedAcquireOptions } from './acquire-options.js';

/**
 * Locks whose turn a client remembers, the most recently taken: a client
 * that re-takes more locks than this back to back starts some of their
 * turns afresh.
 */
export const REMEMBERED_TURNS = 1_024;

/** How many times `turnLength` a turn may grow to while nobody takes the lock when this client stands aside. */
export const MAX_TURN_GROWTH = 32;

/**
 * For how many turns, each with its stand-aside (`turnLength` +
 * `refreshPeriod`), after waiting for another holder a client's turns do
 * not grow. Under load a waiter's read can come later than a refresh period
 * after the release, and the stand-aside then looks unanswered; a doubled
 * turn after such a mistake kept a contended lock twice as long.
 */
export const CONTENTION_MEMORY_IN_TURNS = 8;

interface Turn {
  /** Monotonic time this client's turn began. */
  startedAt: number;
  /** How many times `turnLength` this client's turns on the lock last: 1 until a stand-aside goes unanswered. */
  growth: number;
  /** When this client last released the lock; `undefined` while it holds it. */
  releasedAt: number | undefined;
  /** When this client last took the lock after waiting for another holder; `-Infinity` if never. */
  contendedAt: number;
}

/** What an acquisition starting now does about this client's turn on the lock. */
export interface TurnPlan {
  readonly lockId: string;
  /**
   * `new`: no turn goes on; `continues`: the acquisition goes on with the
   * turn; `stands-aside`: the turn is over, and the acquisition sends nothing
   * for `standAsideMs`.
   */
  readonly kind: 'new' | 'continues' | 'stands-aside';
  readonly standAsideMs: number;
  readonly request: PlanRequest;
}

export interface PlanRequest {
  readonly refreshMs: number;
  readonly turnLengthMs: number;
  /** Whether the call may wait a refresh period: only then does it stand aside. */
  readonly mayWait: boolean;
}

/** What a call with these options (a single lock's or a group's) asks of its turns. */
export function turnRequestOf(
  options: Pick<ResolvedAcquireOptions, 'refreshPeriod' | 'turnLength' | 'additionalTimeToWaitForLock'> &
    Pick<AcquireLockOptions, 'shouldSkipBlockingWait'>,
): PlanRequest {
  return {
    refreshMs: options.refreshPeriod,
    turnLengthMs: options.turnLength,
    mayWait: options.shouldSkipBlockingWait !== true && options.additionalTimeToWaitForLock >= options.refreshPeriod,
  };
}

/** Each lock's turn for one client, the `capacity` locks taken most recently. */
export class Turns {
  readonly #turns = new Map<string, Turn>();

  constructor(
    private readonly clock: MonotonicClock,
    private readonly capacity: number,
  ) {}

  /** Decides, as an acquisition of `lockId` starts, whether it goes on with a turn or stands aside first. */
  plan(lockId: string, request: PlanRequest): TurnPlan {
    const turn = this.#turns.get(lockId);
    if (turn?.releasedAt === undefined) return { lockId, kind: 'new', standAsideMs: 0, request };
    const now = this.clock.now();
    const standAsideUntil = turn.releasedAt + request.refreshMs;
    // Not back to back: every waiter has had a read since the release.
    if (now >= standAsideUntil) return { lockId, kind: 'new', standAsideMs: 0, request };
    if (turn.releasedAt - turn.startedAt < turn.growth * request.turnLengthMs || !request.mayWait) {
      return { lockId, kind: 'continues', standAsideMs: 0, request };
    }
    return { lockId, kind: 'stands-aside', standAsideMs: standAsideUntil - now, request };
  }

  /**
   * The acquisition planned by `plan` took the lock with a write sent at
   * `at`; `waitedForAnother`: it saw someone else hold the lock first.
   */
  taken(plan: TurnPlan, at: number, waitedForAnother: boolean): void {
    const turn = this.#turns.get(plan.lockId);
    if (plan.kind === 'continues' && turn !== undefined && !waitedForAnother) {
      turn.releasedAt = undefined;
      return;
    }
    const contendedAt = waitedForAnother ? at : (turn?.contendedAt ?? -Infinity);
    let growth = waitedForAnother ? 1 : (turn?.growth ?? 1);
    const { turnLengthMs, refreshMs } = plan.request;
    const contendedLately = at - contendedAt < CONTENTION_MEMORY_IN_TURNS * (turnLengthMs + refreshMs);
    // It stood aside and nobody took the lock: likely nobody was waiting for it.
    if (plan.kind === 'stands-aside' && !contendedLately) growth = Math.min(growth * 2, MAX_TURN_GROWTH);
    this.#turns.delete(plan.lockId); // re-inserted: the Map's order is the order of use, oldest first
    this.#turns.set(plan.lockId, { startedAt: at, growth, releasedAt: undefined, contendedAt });
    if (this.#turns.size > this.capacity) {
      const oldest = this.#turns.keys().next();
      if (oldest.done !== true) this.#turns.delete(oldest.value);
    }
  }

  /** This client released the lock; an acquisition of it starting within a refresh period goes on with the turn. */
  released(lockId: string): void {
    const turn = this.#turns.get(lockId);
    if (turn !== undefined) turn.releasedAt = this.clock.now();
  }

  /** Locks with a turn remembered. */
  get size(): number {
    return this.#turns.size;
  }
}
