/**
 * A bounded lock's write states a lease counted from when it leaves, so that
 * it ends by its holder's deadline plus the kill overrun (hold/lease-end.ts).
 * The SDK sends the request it serialized once: it may hold it back first
 * (the adaptive retry mode's rate limiter) and sends a retry as the same
 * request, later. Each attempt would then state the lease computed before
 * the first, and a waiter that saw it applied would count it past that
 * end by the time the attempts waited. A middleware on the command, inside
 * the SDK's retry step and before the request is signed, states the lease
 * again as each attempt leaves.
 *
 * The lease an attempt states ends no later than the one computed before
 * the send, from which the writer counts its safe time: it starts later, and
 * a lease cut by the bound ends at the same moment.
 *
 * A transaction (a fenced acquisition) carries a `ClientRequestToken`, and
 * DynamoDB refuses a request that reuses one with other parameters: a retry
 * whose lease changed gets a token of its own. It then no longer answers
 * success for a first attempt that was applied unseen; its conditions
 * refuse it, with the lock item showing this call's own RVN, which the
 * acquisition reads as applied (a write whose reply was lost).
 */
import { randomUUID } from 'node:crypto';
import type { MonotonicClock } from '../base/clock.js';
import { restateLease } from '../protocol/index.js';

type Middleware = (next: (args: unknown) => Promise<unknown>) => (args: unknown) => Promise<unknown>;

/** Inside the retry middleware (finalizeRequest), before the request is signed: a changed body must be what is signed. */
const WHERE = { relation: 'before', toMiddleware: 'httpSigningMiddleware' } as const;

interface RequestShape {
  body?: unknown;
  headers?: Record<string, string>;
}

export class LeaseRestatement {
  readonly #leaseAt: (now: number) => number;
  readonly #clock: MonotonicClock;

  /** `leaseAt`: the lease a write leaving at `now` states (LeaseEnd.leaseAt of the lease asked for). */
  constructor(leaseAt: (now: number) => number, clock: MonotonicClock) {
    this.#leaseAt = leaseAt;
    this.#clock = clock;
  }

  /** States the lease of each attempt of `command` as it leaves; returns the command. */
  watch<Command extends { readonly middlewareStack: object }>(command: Command): Command {
    let attempts = 0;
    const restate: Middleware = (next) => (args) => {
      const request = (args as { readonly request?: RequestShape }).request;
      if (request !== undefined) this.#restate(request, ++attempts);
      return next(args);
    };
    (command.middlewareStack as { addRelativeTo(middleware: Middleware, options: object): void }).addRelativeTo(restate, WHERE);
    return command;
  }

  /** The SDK serializes JSON bodies as a string, or as UTF-8 bytes (newer versions): the body keeps its form. */
  #restate(request: RequestShape, attempt: number): void {
    const { body } = request;
    // The bytes read as bytes: the SDK's byte body warns when its string methods are called.
    const text =
      typeof body === 'string'
        ? body
        : body instanceof Uint8Array
          ? Buffer.from(body.buffer, body.byteOffset, body.byteLength).toString('utf8')
          : undefined;
    if (text === undefined) return;
    const parsed = JSON.parse(text) as unknown;
    if (!restateLease(parsed, this.#leaseAt(this.#clock.now()))) return;
    const transaction = parsed as { ClientRequestToken?: unknown };
    if (attempt > 1 && typeof transaction.ClientRequestToken === 'string') transaction.ClientRequestToken = randomUUID();
    const restated = JSON.stringify(parsed);
    request.body = typeof body === 'string' ? restated : Buffer.from(restated, 'utf8');
    const headers = request.headers ?? {};
    for (const name of Object.keys(headers)) {
      if (name.toLowerCase() === 'content-length') headers[name] = String(Buffer.byteLength(restated));
    }
  }
}
