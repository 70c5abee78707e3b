/**
 * Fake timers for unit tests, with times written relative to the start of
 * each test. Jest's fake timers also drive performance.now(), so the
 * library's monotonic clock moves with them.
 */
import { afterEach, beforeEach, jest } from '@jest/globals';

export interface FakeTime {
  /** Absolute monotonic time `ms` after the current test started. */
  at(ms: number): number;
  /** Advances fake time to `ms` after the current test started, running due timers and promise continuations. */
  advanceTo(ms: number): Promise<void>;
  /** Lets settled promises run their continuations, and timers already due fire, without moving time. */
  settle(): Promise<void>;
}

/** Registers the hooks; call it at the top of a test file. */
export function useFakeTime(): FakeTime {
  let t0 = 0;

  beforeEach(() => {
    jest.useFakeTimers();
    t0 = performance.now();
  });

  afterEach(() => {
    jest.clearAllTimers();
    jest.useRealTimers();
  });

  const at = (ms: number): number => t0 + ms;
  return {
    at,
    advanceTo: async (ms) => {
      const delta = at(ms) - performance.now();
      if (delta < 0) throw new Error(`cannot go back to ${ms} ms`);
      await jest.advanceTimersByTimeAsync(delta);
    },
    settle: async () => {
      await jest.advanceTimersByTimeAsync(0);
    },
  };
}
