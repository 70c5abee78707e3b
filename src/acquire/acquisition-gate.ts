/**
 * Heartbeats first, and a bounded number of acquisition requests in flight.
 *
 * Acquisitions and heartbeats of one client share the same server; in a
 * burst of acquisitions (a service taking thousands of locks at start-up)
 * heartbeats of the locks taken first fall due and would wait behind the
 * acquisitions, so locks already held run late, or lapse, for the sake of
 * locks not yet held. While the client's heartbeats are behind, the gate
 * lets only a few acquisition requests through at a time; the rest wait
 * to be admitted, in order.
 *
 * When heartbeats are on time it still lets only so many through at once:
 * a burst of thousands would otherwise queue behind the SDK's sockets, where
 * a request waits unsent while its acquisition's time runs, and is cut off
 * as if DynamoDB had not answered. Requests waiting here have not been sent.
 *
 * Polls (the reads of waiting calls, which only watch a lock someone else
 * holds) come last: while a due heartbeat waits unsent, none is let
 * through at all. A server that cannot keep up with the heartbeats spends
 * nothing on them, and a poll held back only learns of a release or a
 * stale lock later. Slow answers alone do not hold polls back: a distant
 * region answers every heartbeat late, and its waits would never poll.
 * Last is not never: a poll that has waited its patience (a lease) joins
 * the acquisitions' queue, behind those already in it, so that neither a
 * stream of acquisitions nor heartbeats overdue for good keep a waiting
 * call blind to its lock, which for a wait without a deadline would be for
 * ever. A patience as short as a refresh period would have polls flow
 * through a lasting overload at nearly their usual rate.
 *
 * Renewals go apart, at once or not at all: the heartbeat that renews a
 * lock won by a reply that came late (late-reply.ts) keeps a lock this
 * client holds, and goes through the heartbeats' lane, so nothing the
 * acquisitions do holds it back; a limit of its own keeps renewals from
 * taking the lane's sockets from the heartbeats. Beyond it, a renewal is
 * refused at once ({@link RenewalsBusyError}) and the lock goes to its
 * caller as won, where the keeper's first heartbeat, due at once, renews it
 * with the others, batched. Queued, renewals were the bottleneck: a burst
 * of locks won late waited nearly a second in line for sixteen single
 * writes and reached their callers with too little safe time to heartbeat.
 */
/** Acquisitions allowed at once while heartbeats are behind, as a share of the concurrency: few, so that heartbeats get nearly all of the server. */
export const ACQUISITIONS_WHILE_BEHIND_SHARE = 1 / 16;

/**
 * Acquisition requests allowed at once while heartbeats are on time: in a
 * burst, four batches of new-lock writes keep the server busy; as single
 * requests beside the heartbeats' 32, fewer than twice the SDK's default 50
 * sockets wait for one, where the SDK warns. Not derived from the heartbeat
 * concurrency: a client that heartbeats one lock at a time still acquires
 * many at once.
 */
export const ACQUISITION_REQUESTS_IN_FLIGHT = 96;

/**
 * Renewals allowed at once, as a share of the heartbeat concurrency: with
 * the heartbeats' own requests, within the lane's sockets (the SDK's
 * default 50 beside the default 32 heartbeats).
 */
export const RENEWALS_SHARE_OF_HEARTBEAT_CONCURRENCY = 1 / 2;

/** A renewal refused at once: as many are in flight as the gate allows. Nothing was sent. */
export class RenewalsBusyError extends Error {
  constructor() {
    super('as many renewals are in flight as allowed');
    this.name = 'RenewalsBusyError';
  }
}

export interface AcquisitionGateOptions {
  /** True while the client's heartbeats are behind schedule: overdue, or answered later than usual. */
  readonly heartbeatsBehind: () => boolean;
  /** True while a due heartbeat waits unsent: no poll goes out then. */
  readonly heartbeatsOverdue: () => boolean;
  /** Acquisition requests in flight at once while heartbeats are on time. */
  readonly limit: number;
  /** Acquisition requests in flight at once while heartbeats are behind. */
  readonly limitWhileBehind: number;
  /** How long a poll waits behind acquisitions, at most, before it queues with them. */
  readonly pollPatienceMs: number;
  /** Renewals in flight at once, whatever the acquisitions do. */
  readonly renewalLimit: number;
}

interface Waiter {
  readonly admit: () => void;
  /** For a poll: when, on performance.now(), it joins the acquisitions' queue. */
  readonly promoteAt: number;
}

/** How often polls held back look again: nothing else may complete meanwhile to let them in, or to notice their patience ran out. */
export const POLL_RECHECK_MS = 50;

/**
 * What a request is for: an acquisition's own step (a write, a read, a
 * listing page), a poll of a waiting call, or the renewal of a lock won late.
 */
export type GateLane = 'acquisition' | 'poll' | 'renewal';

export class AcquisitionGate {
  readonly #options: AcquisitionGateOptions;
  readonly #waiting: Waiter[] = [];
  #pollsWaiting: Waiter[] = [];
  #inFlight = 0;
  #renewalsInFlight = 0;
  #recheck: NodeJS.Timeout | undefined;

  constructor(options: AcquisitionGateOptions) {
    this.#options = options;
  }

  /** Acquisition requests under way. */
  get inFlight(): number {
    return this.#inFlight;
  }

  /** Acquisition requests and polls waiting to be admitted. */
  get waiting(): number {
    return this.#waiting.length + this.#pollsWaiting.length;
  }

  /**
   * Runs one acquisition request once the gate admits it (`request` starts
   * at admission); a waiting request gives up when `signal` aborts.
   */
  async run<T>(request: () => Promise<T>, signal?: AbortSignal, lane: GateLane = 'acquisition'): Promise<T> {
    if (lane === 'renewal') return this.#runRenewal(request, signal);
    if (this.#mayPass(lane)) this.#inFlight++;
    else await this.#wait(lane, signal); // counted in by #admitNext
    try {
      return await request();
    } finally {
      this.#inFlight--;
      this.#admitNext();
    }
  }

  /** A renewal, at once within the renewals' own limit; beyond it, refused with {@link RenewalsBusyError}. */
  async #runRenewal<T>(request: () => Promise<T>, signal: AbortSignal | undefined): Promise<T> {
    signal?.throwIfAborted();
    if (this.#renewalsInFlight >= this.#options.renewalLimit) throw new RenewalsBusyError();
    this.#renewalsInFlight++;
    try {
      return await request();
    } finally {
      this.#renewalsInFlight--;
    }
  }

  #mayPass(lane: GateLane): boolean {
    // Those already waiting go first, so that a request cannot overtake them.
    if (this.#waiting.length > 0) return false;
    return lane === 'poll' ? this.#pollsWaiting.length === 0 && this.#hasRoomForPoll() : this.#hasRoom();
  }

  /** Whether one more acquisition request may be in flight now. */
  #hasRoom(): boolean {
    const { limit, limitWhileBehind, heartbeatsBehind } = this.#options;
    if (this.#inFlight < Math.min(limit, limitWhileBehind)) return true;
    return this.#inFlight < limit && !heartbeatsBehind();
  }

  /** Whether one more poll may be in flight now: never while a heartbeat is overdue, otherwise as an acquisition request. */
  #hasRoomForPoll(): boolean {
    return !this.#options.heartbeatsOverdue() && this.#hasRoom();
  }

  #wait(lane: GateLane, signal: AbortSignal | undefined): Promise<void> {
    signal?.throwIfAborted();
    return new Promise<void>((resolve, reject) => {
      const onAbort = (): void => {
        // A poll may have moved to the acquisitions' queue meanwhile.
        for (const queue of [this.#waiting, this.#pollsWaiting]) {
          const index = queue.indexOf(waiter);
          if (index >= 0) queue.splice(index, 1);
        }
        reject(signal?.reason);
        this.#admitNext();
      };
      const waiter: Waiter = {
        admit: () => {
          signal?.removeEventListener('abort', onAbort);
          resolve();
        },
        promoteAt: performance.now() + this.#options.pollPatienceMs,
      };
      signal?.addEventListener('abort', onAbort, { once: true });
      if (lane === 'acquisition') {
        this.#waiting.push(waiter);
        return;
      }
      this.#pollsWaiting.push(waiter);
      this.#admitNext();
    });
  }

  /** Lets waiting requests in while there is room: acquisitions first (patient polls among them), then polls. */
  #admitNext(): void {
    while (this.#waiting.length > 0 && this.#hasRoom()) this.#admit(this.#waiting);
    if (this.#waiting.length === 0) {
      while (this.#pollsWaiting.length > 0 && this.#hasRoomForPoll()) this.#admit(this.#pollsWaiting);
    }
    if (this.#pollsWaiting.length > 0 && this.#recheck === undefined) {
      this.#recheck = setTimeout(() => {
        this.#recheck = undefined;
        this.#promotePatientPolls();
        this.#admitNext();
      }, POLL_RECHECK_MS);
      this.#recheck.unref();
    }
  }

  /** Moves the polls that have waited their patience to the back of the acquisitions' queue, in their order. */
  #promotePatientPolls(): void {
    const now = performance.now();
    const stillWaiting: Waiter[] = [];
    for (const waiter of this.#pollsWaiting) (waiter.promoteAt <= now ? this.#waiting : stillWaiting).push(waiter);
    this.#pollsWaiting = stillWaiting;
  }

  #admit(queue: Waiter[]): void {
    const next = queue.shift() as Waiter;
    // Counted now, not when its continuation runs, so that one completion admits one request.
    this.#inFlight++;
    next.admit();
  }
}
