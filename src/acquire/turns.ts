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
 * A holder cannot see who waits, so it stands aside at every `turnLength`
 * only while it has reason to think someone does: it waited for another
 * holder of the lock within the last CONTENTION_MEMORY_IN_TURNS turns.
 * Otherwise its turns last QUIET_TURN_LENGTHS times as long, so that a lone
 * client pays for courtesy rarely, and a waiter it cannot see still gets
 * the lock within a bounded time.
 */
import type { MonotonicClock } from '../base/clock.js';

/**
 * Locks whose turn a client remembers, the most recently taken: a client
 * that re-takes more locks than this back to back starts some of their
 * turns afresh.
 */
export const REMEMBERED_TURNS = 1_024;

/** How many times `turnLength` a turn lasts while the client has not waited for another holder lately. */
export const QUIET_TURN_LENGTHS = 32;

/**
 * For how many turns, each with its stand-aside (`turnLength` +
 * `refreshPeriod`), after waiting for another holder a client takes turns
 * of `turnLength`. Under load a waiter's read can come later than a refresh
 * period after the release, so a stand-aside nobody answered does not show
 * that nobody waits; one answered now and then keeps the memory fresh.
 */
export const CONTENTION_MEMORY_IN_TURNS = 8;

interface Turn {
  /** Monotonic time this client's turn began. */
  startedAt: number;
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
    if (turn.releasedAt - turn.startedAt < turnLength(turn, now, request) || !request.mayWait) {
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
    this.#turns.delete(plan.lockId); // re-inserted: the Map's order is the order of use, oldest first
    this.#turns.set(plan.lockId, { startedAt: at, releasedAt: undefined, contendedAt });
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

/** The length of `turn` now: `turnLength` while this client waited for another holder lately. */
function turnLength(turn: Turn, now: number, request: PlanRequest): number {
  const { turnLengthMs, refreshMs } = request;
  const contendedLately = now - turn.contendedAt < CONTENTION_MEMORY_IN_TURNS * (turnLengthMs + refreshMs);
  return contendedLately ? turnLengthMs : QUIET_TURN_LENGTHS * turnLengthMs;
}
