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
  const command = { input: {}, middlewareStack: { add: (m: (next: Handler) => Handler) => void (middleware = m) } };
  const send = async (delayMs: number): Promise<void> => {
    clock.mono += delayMs;
    clock.wall += delayMs;
    await middleware?.(async () => undefined)({});
  };
  return { command, send };
}

/** A sender with `send` alone: each command carries the departure's middleware. */
const NOT_AN_SDK_CLIENT = { send: async () => undefined };

/** An SDK client's stack, as the departure sees it: the middleware it is given, by name. */
function sdkSender() {
  const added: Array<{ readonly middleware: (next: Handler) => Handler; readonly name: unknown }> = [];
  const sender = {
    middlewareStack: {
      add: (middleware: (next: Handler) => Handler, options: { name?: unknown }) => void added.push({ middleware, name: options.name }),
    },
  };
  /** Runs the client's stack for one attempt of a command with `input`, `delayMs` later on the clock. */
  const attempt = async (clock: ReturnType<typeof testClock>, input: object, delayMs: number): Promise<void> => {
    clock.mono += delayMs;
    clock.wall += delayMs;
    for (const { middleware } of added) await middleware(async () => undefined)({ input, request: {} });
  };
  return { sender, added, attempt };
}

describe('Departure', () => {
  it('without a stamp, the lease counts from the first attempt’s departure', async () => {
    const clock = testClock();
    const departure = new Departure(clock);
    const { command, send } = fakeCommand(clock);
    departure.watch(command, NOT_AN_SDK_CLIENT);
    await send(3_000); // held up 3 s in the SDK's rate limiter
    expect(departure.lookup()).toEqual({ lookupTime: 3_100, lookupWallTime: 1_764_000_003_000 });
  });

  it('with a stamp, the lease counts from the moment the stamp was read, however late the write leaves', async () => {
    const clock = testClock();
    const departure = new Departure(clock);
    const { command, send } = fakeCommand(clock);
    departure.watch(command, NOT_AN_SDK_CLIENT);
    expect(departure.stamp()).toBe(1_764_000_000_000);
    await send(3_000);
    expect(departure.lookup()).toEqual({ lookupTime: 100, lookupWallTime: 1_764_000_000_000 });
  });

  it('refuses to stamp without a wall clock', () => {
    expect(() => new Departure({ now: () => 0 }).stamp()).toThrow(/wallNow/);
  });

  it("through an SDK client, one middleware on the client's stack notes each watched command's first attempt, by its input", async () => {
    const clock = testClock();
    const { sender, added, attempt } = sdkSender();
    const first = new Departure(clock);
    const second = new Departure(clock);
    const command = (): { input: object; middlewareStack: object } => ({ input: {}, middlewareStack: {} });
    const one = first.watch(command(), sender);
    const two = second.watch(command(), sender);

    await attempt(clock, one.input, 1_000);
    await attempt(clock, two.input, 2_000);
    await attempt(clock, one.input, 500); // a retry: the first attempt's moment stays

    expect(added).toHaveLength(1);
    expect(typeof added[0]?.name === 'string' && added[0].name.startsWith('dynamodbLockDeparture-')).toBe(true);
    expect(first.lookup().lookupTime).toBe(1_100);
    expect(second.lookup().lookupTime).toBe(3_100);
  });

  it('a command through an SDK client that never leaves keeps the moment before it was handed over', async () => {
    const clock = testClock();
    const { sender, attempt } = sdkSender();
    const departure = new Departure(clock);
    departure.watch({ input: {}, middlewareStack: {} }, sender);
    await attempt(clock, {}, 1_000); // another command's attempt
    expect(departure.lookup().lookupTime).toBe(100);
  });
});
