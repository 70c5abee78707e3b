/**
 * Departure: where a lock write's lease counts from. Unstamped, from its
 * first attempt's departure; stamped (client option `clockBound`), from the
 * moment the stamp's wall-clock time was read, before the write was handed
 * over, so that no stamp is later than the start of the lease it vouches for.
 */
import { describe, expect, it } from '@jest/globals';
import { Departure } from '../../src/dynamodb/departure.js';

type Handler = (args: unknown) => Promise<unknown>;

function testClock() {
  const clock = { mono: 100, wall: 1_764_000_000_000, now: () => clock.mono, wallNow: () => clock.wall };
  return clock;
}

/** A command whose middleware stack keeps the departure's middleware, and a send that runs it after `delayMs` on the clock. */
function fakeCommand(clock: ReturnType<typeof testClock>) {
  let middleware: ((next: Handler) => Handler) | undefined;
  const command = { middlewareStack: { add: (m: (next: Handler) => Handler) => void (middleware = m) } };
  const send = async (delayMs: number): Promise<void> => {
    clock.mono += delayMs;
    clock.wall += delayMs;
    await middleware?.(async () => undefined)({});
  };
  return { command, send };
}

describe('Departure', () => {
  it('without a stamp, the lease counts from the first attempt’s departure', async () => {
    const clock = testClock();
    const departure = new Departure(clock);
    const { command, send } = fakeCommand(clock);
    departure.watch(command);
    await send(3_000); // held up 3 s in the SDK's rate limiter
    expect(departure.lookup()).toEqual({ lookupTime: 3_100, lookupWallTime: 1_764_000_003_000 });
  });

  it('with a stamp, the lease counts from the moment the stamp was read, however late the write leaves', async () => {
    const clock = testClock();
    const departure = new Departure(clock);
    const { command, send } = fakeCommand(clock);
    departure.watch(command);
    expect(departure.stamp()).toBe(1_764_000_000_000);
    await send(3_000);
    expect(departure.lookup()).toEqual({ lookupTime: 100, lookupWallTime: 1_764_000_000_000 });
  });

  it('refuses to stamp without a wall clock', () => {
    expect(() => new Departure({ now: () => 0 }).stamp()).toThrow(/wallNow/);
  });
});
