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
 * Every waiter, Java's included, reads the lock once in that period, finds
 * it free, and the first to read takes it. Nothing on the wire changes, only
 * when this client asks.
 *
 * The client that stood aside becomes the waiter whose read comes last.
 * Waiters read at a steady period (lock-poller.ts), so turns tend to pass
 * round in the order of their reads. After its own turn, a waiter also
 * leaves a free lock, for one read, to the owners it saw in the round before
 * that turn. Neither rule can stop a waiter whose read falls between a
 * holder's release and its re-take from winning the race for the lock, so
 * the order is not strict (BENCHMARKS.md, "Fair contention").
 *
 * A holder cannot see who waits for its lock. A turn that began after this
 * client waited for another holder gets the call's `turnLength`; so does a
 * new turn. When nobody took the lock while this client stood aside, its
 * next turn lasts twice as long, up to MAX_TURN_GROWTH times `turnLength`:
 * a lone client that re-takes its lock over and over stands aside ever more
 * rarely, and again as often as the length says once it has waited for
 * someone. Turns grow only once this client has seen nobody else hold the
 * lock for CONTENTION_MEMORY_IN_TURNS turns: under contention a stand-aside
 * can look unanswered when it was not. An acquisition after someone else
 * held the lock since this client's release starts a new turn.
 */
import type { MonotonicClock } from '../base/clock.js';

/**
 * Locks whose turn a client remembers, the most recently taken or seen
 * held by someone else: a client that re-takes more locks than this back to
 * back starts some of their turns afresh.
 */
export const REMEMBERED_TURNS = 1_024;

/**
 * Other owners a client remembers seeing on one lock between two of its
 * turns. Past that many, it counts the round as over for everyone: owner
 * names are often unique per process, and a client that only waits would
 * otherwise keep one for every process it ever saw.
 */
export const MAX_OWNERS_REMEMBERED = 64;

/**
 * For how many turns, each with its stand-aside (`turnLength` +
 * `refreshPeriod`), a client remembers seeing someone else hold a lock:
 * until that long has passed, its turns do not grow. A stand-aside can look
 * unanswered under contention: every waiter that read the lock free may
 * have left it to another for that read, or this client's own read may have
 * fallen between the new holder's release and its re-take, so that it took
 * the lock back unaware. A client sees another holder just before it wins
 * the lock after waiting, so this bounds how many mistaken stand-asides in
 * a row it takes for being alone: each such mistake only costs the others
 * one more turn of the usual length, where growth let one worker keep the
 * lock for seconds (BENCHMARKS.md "Fair contention"). A lone client pays
 * for it once contention ends: its turns keep their length for that long.
 */
export const CONTENTION_MEMORY_IN_TURNS = 8;

/** How many times `turnLength` a turn may grow to while nobody takes the lock when this client stands aside. */
export const MAX_TURN_GROWTH = 32;

interface Turn {
  /** Monotonic time this client's turn began; `undefined` before its first. */
  startedAt: number | undefined;
  lengthMs: number;
  /** When this client last released the lock; `undefined` while it holds it. */
  releasedAt: number | undefined;
  /** Other owners seen holding the lock since this client's last turn began. */
  heldSince: Set<string>;
  /** Other owners seen holding the lock in the round before that: each has a turn before this client's next. */
  heldBefore: ReadonlySet<string>;
  /** Monotonic time this client last saw another owner hold the lock; `-Infinity` if never. */
  sawOtherAt: number;
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
  /** Whether the call may wait a refresh period: only then does it stand aside, or leave a free lock to others. */
  readonly mayWait: boolean;
}

/** Each lock's turn for one client, the `capacity` locks used most recently. */
export class Turns {
  readonly #turns = new Map<string, Turn>();

  constructor(
    private readonly clock: MonotonicClock,
    private readonly capacity: number,
  ) {}

  /** Decides, as an acquisition of `lockId` starts, whether it goes on with a turn or stands aside first. */
  plan(lockId: string, request: PlanRequest): TurnPlan {
    const turn = this.#turns.get(lockId);
    if (turn?.releasedAt === undefined || turn.startedAt === undefined) return { lockId, kind: 'new', standAsideMs: 0, request };
    const now = this.clock.now();
    const standAsideUntil = turn.releasedAt + request.refreshMs;
    if (now >= standAsideUntil || turn.sawOtherAt > turn.releasedAt) {
      // Not back to back: every waiter has had a read since the release, or someone else held the lock since.
      turn.releasedAt = undefined;
      return { lockId, kind: 'new', standAsideMs: 0, request };
    }
    if (turn.releasedAt - turn.startedAt < turn.lengthMs || !request.mayWait) {
      return { lockId, kind: 'continues', standAsideMs: 0, request };
    }
    return { lockId, kind: 'stands-aside', standAsideMs: standAsideUntil - now, request };
  }

  /** A waiter of this client saw `ownerName` hold the lock. */
  sawHolder(lockId: string, ownerName: string): void {
    const turn = this.#turns.get(lockId);
    const now = this.clock.now();
    if (turn === undefined) {
      this.#set(lockId, {
        startedAt: undefined,
        lengthMs: 0,
        releasedAt: undefined,
        heldSince: new Set([ownerName]),
        heldBefore: new Set(),
        sawOtherAt: now,
      });
      return;
    }
    turn.sawOtherAt = now;
    // A lock someone else holds now is contended now: it outlives locks only taken since.
    this.#set(lockId, turn);
    if (turn.heldSince.size < MAX_OWNERS_REMEMBERED || turn.heldSince.has(ownerName)) {
      turn.heldSince.add(ownerName);
    } else {
      turn.heldSince = new Set([ownerName]);
      turn.heldBefore = new Set();
    }
  }

  /**
   * Whether a waiter of this client may take the lock it found free: yes
   * once every owner seen in the round before this client's last turn has
   * held it since. A waiter that may not leaves it to them for one read.
   */
  mayTakeFree(lockId: string): boolean {
    const turn = this.#turns.get(lockId);
    if (turn === undefined) return true;
    for (const owner of turn.heldBefore) if (!turn.heldSince.has(owner)) return false;
    return true;
  }

  /**
   * The acquisition planned by `plan` took the lock with a write sent at
   * `at`; `waitedForAnother`: it saw someone else hold the lock first.
   */
  taken(plan: TurnPlan, at: number, waitedForAnother: boolean): void {
    const { turnLengthMs } = plan.request;
    const turn = this.#turns.get(plan.lockId);
    if (turn === undefined || turn.startedAt === undefined || waitedForAnother || plan.kind === 'new') {
      this.#set(plan.lockId, {
        startedAt: at,
        lengthMs: turnLengthMs,
        releasedAt: undefined,
        heldSince: new Set(),
        heldBefore: turn?.heldSince ?? new Set(),
        sawOtherAt: turn?.sawOtherAt ?? -Infinity,
      });
    } else if (plan.kind === 'continues') {
      turn.releasedAt = undefined;
    } else {
      // It stood aside and nobody took the lock: likely nobody is waiting, unless someone else held it lately.
      const contended = at - turn.sawOtherAt < CONTENTION_MEMORY_IN_TURNS * (turnLengthMs + plan.request.refreshMs);
      turn.startedAt = at;
      if (!contended) turn.lengthMs = Math.min(turn.lengthMs * 2, turnLengthMs * MAX_TURN_GROWTH);
      turn.releasedAt = undefined;
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

  #set(lockId: string, turn: Turn): void {
    // Re-inserted, so that the Map's order is the order of use, oldest first.
    this.#turns.delete(lockId);
    this.#turns.set(lockId, turn);
    if (this.#turns.size > this.capacity) {
      const oldest = this.#turns.keys().next();
      if (oldest.done !== true) this.#turns.delete(oldest.value);
    }
  }
}
