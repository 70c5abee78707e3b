/**
 * A load worker's acquisition calls: how each ended (tallied), and whether
 * it settled within its bound. The bound of a call that waits `waitMs` is
 * what the library promises it ends within: the wait, plus the lease of the
 * holder it finds, plus the cut-off that follows (a lease, or the refresh
 * period if longer), plus the run's margin for a loaded machine. A call
 * still pending past its bound is logged at each further bound, so that one
 * that never settles is seen too; the checker takes the driver's pauses out.
 */
import { isLockNotGrantedError } from '../src/index.js';
import { nowNs, type ChaosEvent } from './events.js';

export interface AcquisitionWatchOptions {
  readonly worker: string;
  readonly log: (...events: ChaosEvent[]) => void;
  readonly leaseMs: number;
  readonly pollMs: number;
  readonly marginMs: number;
}

interface Pending {
  readonly key: string;
  readonly startNs: bigint;
  readonly boundMs: number;
  /** Bounds passed so far that were logged. */
  logged: number;
}

/** Seconds between two tallies in the log. */
const TALLY_EVERY_S = 5;

export class AcquisitionWatch {
  readonly #options: AcquisitionWatchOptions;
  readonly #pending = new Set<Pending>();
  #calls = 0;
  #granted = 0;
  #refused = 0;
  readonly #failed: Record<string, number> = {};
  #sweeps = 0;

  constructor(options: AcquisitionWatchOptions) {
    this.#options = options;
  }

  /**
   * Makes one acquisition call that may wait `waitMs` beyond the holder's
   * lease: its lock, or `undefined` when it was not granted or failed (a
   * real caller would try again).
   */
  async acquire<T>(key: string, waitMs: number, call: () => Promise<T | undefined>): Promise<T | undefined> {
    const { leaseMs, pollMs, marginMs } = this.#options;
    const pending: Pending = {
      key,
      startNs: process.hrtime.bigint(),
      boundMs: waitMs + leaseMs + Math.max(pollMs, leaseMs) + marginMs,
      logged: 0,
    };
    this.#pending.add(pending);
    this.#calls++;
    try {
      const result = await call();
      if (result === undefined) this.#refused++;
      else this.#granted++;
      return result;
    } catch (error) {
      this.failed(error);
      return undefined;
    } finally {
      this.#pending.delete(pending);
      if (this.#overdueBy(pending) >= 1) this.#logOverdue(pending, true);
    }
  }

  /** Counts a call that ended in an error: not granted in time, or failed by error name. */
  failed(error: unknown): void {
    if (isLockNotGrantedError(error) && error.name === 'LockNotGrantedError') this.#refused++;
    else {
      const name = (error as Error | undefined)?.name ?? String(error);
      this.#failed[name] = (this.#failed[name] ?? 0) + 1;
    }
  }

  /** Logs pending calls past another bound, and now and then the tally; call about once a second. */
  sweep(): void {
    for (const pending of this.#pending) {
      const passed = Math.floor(this.#overdueBy(pending));
      if (passed > pending.logged) {
        pending.logged = passed;
        this.#logOverdue(pending, false);
      }
    }
    if (++this.#sweeps % TALLY_EVERY_S === 0) this.tally();
  }

  tally(): void {
    this.#options.log({
      type: 'tally',
      worker: this.#options.worker,
      calls: this.#calls,
      granted: this.#granted,
      refused: this.#refused,
      failed: { ...this.#failed },
    });
  }

  /** How many bounds the call has run for. */
  #overdueBy(pending: Pending): number {
    return Number((process.hrtime.bigint() - pending.startNs) / 1_000_000n) / pending.boundMs;
  }

  #logOverdue(pending: Pending, settled: boolean): void {
    this.#options.log({
      type: 'overdue',
      worker: this.#options.worker,
      key: pending.key,
      startNs: pending.startNs.toString(),
      atNs: nowNs(),
      boundMs: pending.boundMs,
      settled,
    });
  }
}
