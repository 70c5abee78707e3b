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

export interface AcquisitionGateOptions {
  /** True while the client's heartbeats are behind schedule. */
  readonly heartbeatsBehind: () => boolean;
  /** Acquisition requests in flight at once while heartbeats are on time. */
  readonly limit: number;
  /** Acquisition requests in flight at once while heartbeats are behind. */
  readonly limitWhileBehind: number;
}

interface Waiter {
  readonly admit: () => void;
}

export class AcquisitionGate {
  readonly #options: AcquisitionGateOptions;
  readonly #waiting: Waiter[] = [];
  #inFlight = 0;

  constructor(options: AcquisitionGateOptions) {
    this.#options = options;
  }

  /** Acquisition requests under way. */
  get inFlight(): number {
    return this.#inFlight;
  }

  /** Acquisition requests waiting to be admitted. */
  get waiting(): number {
    return this.#waiting.length;
  }

  /**
   * Runs one acquisition request once the gate admits it (`request` starts
   * at admission); a waiting request gives up when `signal` aborts.
   */
  async run<T>(request: () => Promise<T>, signal?: AbortSignal): Promise<T> {
    if (this.#mayPass()) this.#inFlight++;
    else await this.#wait(signal); // counted in by #admitNext
    try {
      return await request();
    } finally {
      this.#inFlight--;
      this.#admitNext();
    }
  }

  #mayPass(): boolean {
    // Those already waiting go first, so that a request cannot overtake them.
    return this.#waiting.length === 0 && this.#hasRoom();
  }

  /** Whether one more request may be in flight now. */
  #hasRoom(): boolean {
    const { limit, limitWhileBehind, heartbeatsBehind } = this.#options;
    if (this.#inFlight < Math.min(limit, limitWhileBehind)) return true;
    return this.#inFlight < limit && !heartbeatsBehind();
  }

  #wait(signal: AbortSignal | undefined): Promise<void> {
    signal?.throwIfAborted();
    return new Promise<void>((resolve, reject) => {
      const onAbort = (): void => {
        const index = this.#waiting.indexOf(waiter);
        if (index >= 0) this.#waiting.splice(index, 1);
        reject(signal?.reason);
        this.#admitNext();
      };
      const waiter: Waiter = {
        admit: () => {
          signal?.removeEventListener('abort', onAbort);
          resolve();
        },
      };
      this.#waiting.push(waiter);
      signal?.addEventListener('abort', onAbort, { once: true });
    });
  }

  /** Lets waiting requests in while there is room. */
  #admitNext(): void {
    while (this.#waiting.length > 0) {
      if (!this.#hasRoom()) return;
      const next = this.#waiting.shift() as Waiter;
      // Counted now, not when its continuation runs, so that one completion admits one request.
      this.#inFlight++;
      next.admit();
    }
  }
}
