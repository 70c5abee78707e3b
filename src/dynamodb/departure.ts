/**
 * When a lock write first left this client. A lock's lease counts from the
 * moment its write can first have taken effect, and no write takes effect
 * before it leaves: a moment measured inside the SDK's retry step, just
 * before the request goes to the HTTP handler, is as safe as one taken
 * before calling `send`, and leaves out the time the request waited in the
 * SDK's client-side rate limiter (`retryMode: 'adaptive'` holds requests
 * back for seconds after throttling, which otherwise came off the lease of
 * the lock the write took). Only the first attempt counts: a retry may
 * follow an attempt that was applied.
 */
import type { MonotonicClock } from '../base/clock.js';

/** An SDK command's own middleware stack, as far as the departure uses it (the SDK's types name each step's shape). */
interface MiddlewareStackShape {
  add(middleware: (next: (args: unknown) => Promise<unknown>) => (args: unknown) => Promise<unknown>, options: object): void;
}

/** The step and priority of the departure's middleware: inside the retry middleware (finalizeRequest), just before the handler. */
const WHERE = { step: 'deserialize', priority: 'low' } as const;

export class Departure {
  readonly #clock: MonotonicClock;
  readonly #before: number;
  readonly #beforeWall: number | undefined;
  #at: number | undefined;
  #wallAt: number | undefined;
  #stamped = false;

  /** Built just before the write is handed to the SDK: its moment is the fallback when no attempt reports one. */
  constructor(clock: MonotonicClock) {
    this.#clock = clock;
    this.#before = clock.now();
    this.#beforeWall = clock.wallNow?.();
  }

  /** Notes on `command` when its first attempt leaves; returns the command. */
  watch<Command extends { readonly middlewareStack: object }>(command: Command): Command {
    (command.middlewareStack as MiddlewareStackShape).add(
      (next) => (args) => {
        if (this.#at === undefined) {
          this.#at = this.#clock.now();
          this.#wallAt = this.#clock.wallNow?.();
        }
        return next(args);
      },
      WHERE,
    );
    return command;
  }

  /**
   * The wall-clock time to stamp on the write (client option `clockBound`):
   * that of the moment before the write was handed over. Its lease then
   * counts from that moment, not from a later departure: a waiter trusts the
   * stamp to be no earlier than the lease's start.
   */
  stamp(): number {
    if (this.#beforeWall === undefined) throw new Error('a stamped write needs a clock with wallNow()');
    this.#stamped = true;
    return this.#beforeWall;
  }

  /**
   * The moment the lease counts from: the first attempt's departure, or,
   * when none was seen (a sender that is not an SDK client runs no
   * middleware), the moment before the write was handed over.
   */
  lookup(): { readonly lookupTime: number; readonly lookupWallTime: number | undefined } {
    return this.#at === undefined || this.#stamped
      ? { lookupTime: this.#before, lookupWallTime: this.#beforeWall }
      : { lookupTime: this.#at, lookupWallTime: this.#wallAt };
  }
}
