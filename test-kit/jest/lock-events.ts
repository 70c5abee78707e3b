/**
 * Observing what a lock client tells its user: its events in the order they
 * fired, and the moment a signal aborted. Times are monotonic
 * (`performance.now()`), the clock the lock client times leases on.
 */
import { expect } from '@jest/globals';
import type { Lock, LockClient, LockClientEvents, LockLostError } from '../../src/index.js';

export type EventName = keyof LockClientEvents;

export interface SeenEvent<Name extends EventName = EventName> {
  readonly name: Name;
  readonly at: number;
  readonly event: LockClientEvents[Name];
}

export interface EventLog {
  readonly all: SeenEvent[];
  /** The events named `name`, about `lock` if given. */
  of<Name extends EventName>(name: Name, lock?: Lock): Array<SeenEvent<Name>>;
}

const NAMES: readonly EventName[] = ['lost', 'endangered', 'heartbeatError', 'heartbeat'];

/** Records every event of `client` from now on (for the client's lifetime). */
export function recordEvents(client: LockClient): EventLog {
  const all: SeenEvent[] = [];
  for (const name of NAMES) client.on(name, (event) => all.push({ name, at: performance.now(), event }));
  return {
    all,
    of: <Name extends EventName>(name: Name, lock?: Lock) =>
      all.filter((seen): seen is SeenEvent<Name> => seen.name === name && (lock === undefined || seen.event.lock === lock)),
  };
}

/** Asserts that `lost` fired exactly once for `lock`, with this very error (not merely an equal one). */
export function expectLostOnce(events: EventLog, lock: Lock, error: unknown): void {
  const lost = events.of('lost');
  expect(lost.map((seen) => seen.event.error.message)).toEqual([(error as LockLostError).message]);
  expect(lost[0]?.event.lock).toBe(lock);
  expect(lost[0]?.event.error).toBe(error);
}

/** Resolves with the abort reason and the time it aborted; rejects if it has not aborted within `timeoutMs`. */
export function abortOf(signal: AbortSignal, timeoutMs: number): Promise<{ reason: unknown; at: number }> {
  if (signal.aborted) return Promise.resolve({ reason: signal.reason as unknown, at: performance.now() });
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      signal.removeEventListener('abort', onAbort);
      reject(new Error(`the signal did not abort within ${timeoutMs} ms`));
    }, timeoutMs);
    const onAbort = (): void => {
      clearTimeout(timer);
      resolve({ reason: signal.reason, at: performance.now() });
    };
    signal.addEventListener('abort', onAbort, { once: true });
  });
}

/** Resolves with `promise`, or rejects naming `what` if it has not settled within `timeoutMs`. */
export function within<T>(promise: Promise<T>, timeoutMs: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`${what} did not happen within ${timeoutMs} ms`)), timeoutMs);
  });
  return Promise.race([promise, timeout]).finally(() => clearTimeout(timer));
}

/** What `act` throws; fails if it returns. */
export function thrownBy(act: () => unknown): unknown {
  try {
    act();
  } catch (error) {
    return error;
  }
  throw new Error('expected it to throw, but it returned');
}
