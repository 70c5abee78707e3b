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
 *
 * The moment is taken by one middleware on the stack of the SDK client the
 * writes go through, added the first time a write is watched: it looks the
 * command's input up among the writes being watched. A middleware added to
 * each command instead costs the SDK a merge of that command's stack on
 * every call (about 5 µs of CPU each). A sender that is not an SDK client
 * has no stack of its own: each command then carries the middleware.
 */
import { randomUUID } from 'node:crypto';
import type { MonotonicClock } from '../base/clock.js';

type Middleware = (next: (args: unknown) => Promise<unknown>) => (args: unknown) => Promise<unknown>;

/** An SDK client's or command's middleware stack, as far as the departure uses it (the SDK's types name each step's shape). */
interface MiddlewareStackShape {
  add(middleware: Middleware, options: object): void;
}

/**
 * The name of the middleware on an SDK client's stack: unique to this copy
 * of the package, whose watched writes only it knows.
 */
export const DEPARTURE_MIDDLEWARE = `dynamodbLockDeparture-${randomUUID()}`;

/** The step and priority of the departure's middleware: inside the retry middleware (finalizeRequest), just before the handler. */
const WHERE = { step: 'deserialize', priority: 'low' } as const;

/** The departures of the commands watched through an SDK client's stack, by the command's input, until the first attempt leaves. */
const leaving = new WeakMap<object, Departure[]>();

/**
 * The SDK stacks that carry the departure middleware. By stack, not by
 * sender: several senders can share one stack (a DynamoDBDocumentClient
 * shares the stack of the DynamoDBClient it wraps, and so do two documents
 * clients made from one client), and a second `add` under the same name
 * throws.
 */
const watchingStacks = new WeakSet<object>();

/** Stacks that refused it: asked once, not at every write. */
const refusingStacks = new WeakSet<object>();

const departureMiddleware: Middleware = (next) => (args) => {
  const input = (args as { readonly input?: unknown }).input;
  const departures = typeof input === 'object' && input !== null ? leaving.get(input) : undefined;
  if (departures !== undefined) {
    leaving.delete(input as object);
    for (const departure of departures) departure.left();
  }
  return next(args);
};

/** Whether `sender`'s own stack carries the departure middleware, adding it if the sender is an SDK client. */
function watchesOnItsStack(sender: object): boolean {
  const stack = (sender as { readonly middlewareStack?: Partial<MiddlewareStackShape> }).middlewareStack;
  if (typeof stack?.add !== 'function') return false;
  if (watchingStacks.has(stack)) return true;
  if (refusingStacks.has(stack)) return false;
  try {
    stack.add(departureMiddleware, { ...WHERE, name: DEPARTURE_MIDDLEWARE });
  } catch {
    // The stack refuses it (it already has one of that name, copied from another stack, say): each command carries its own.
    refusingStacks.add(stack);
    return false;
  }
  watchingStacks.add(stack);
  return true;
}

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

  /** Notes when `command`'s first attempt through `sender` leaves; returns the command. */
  watch<Command extends { readonly input: object; readonly middlewareStack: object }>(command: Command, sender: object): Command {
    if (watchesOnItsStack(sender)) {
      const departures = leaving.get(command.input);
      if (departures === undefined) leaving.set(command.input, [this]);
      else departures.push(this);
    } else {
      (command.middlewareStack as MiddlewareStackShape).add(
        (next) => (args) => {
          this.left();
          return next(args);
        },
        WHERE,
      );
    }
    return command;
  }

  /** An attempt of the write is leaving now: the first one sets the moment. */
  left(): void {
    if (this.#at !== undefined) return;
    this.#at = this.#clock.now();
    this.#wallAt = this.#clock.wallNow?.();
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
