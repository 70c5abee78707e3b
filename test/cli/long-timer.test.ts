/** Long timers: delays past Node's timer limit (2^31−1 ms) are waited out in steps. Fake timers: pure scheduling. */
import { afterEach, beforeEach, describe, expect, it, jest } from '@jest/globals';
import { longDeadline, setLongTimeout } from '../../src/cli/long-timer.js';

const LIMIT_MS = 2 ** 31 - 1;
const THIRTY_DAYS_MS = 30 * 24 * 3_600_000;

beforeEach(() => {
  jest.useFakeTimers();
});
afterEach(() => {
  jest.useRealTimers();
});

describe('setLongTimeout', () => {
  it('fires once, when a delay longer than the timer limit has passed, not before', () => {
    const fired = jest.fn();
    setLongTimeout(fired, THIRTY_DAYS_MS);
    jest.advanceTimersByTime(LIMIT_MS);
    jest.advanceTimersByTime(THIRTY_DAYS_MS - LIMIT_MS - 1);
    expect(fired).not.toHaveBeenCalled();
    jest.advanceTimersByTime(1);
    expect(fired).toHaveBeenCalledTimes(1);
    jest.advanceTimersByTime(THIRTY_DAYS_MS);
    expect(fired).toHaveBeenCalledTimes(1);
  });

  it('never fires once cleared, in any of its steps', () => {
    const fired = jest.fn();
    const timer = setLongTimeout(fired, THIRTY_DAYS_MS);
    jest.advanceTimersByTime(LIMIT_MS + 1);
    timer.clear();
    jest.advanceTimersByTime(THIRTY_DAYS_MS);
    expect(fired).not.toHaveBeenCalled();
  });
});

describe('longDeadline', () => {
  it('aborts with a TimeoutError after 600 hours, not before', () => {
    const bound = longDeadline(600 * 3_600_000);
    jest.advanceTimersByTime(600 * 3_600_000 - 1);
    expect(bound.signal.aborted).toBe(false);
    jest.advanceTimersByTime(1);
    expect((bound.signal.reason as DOMException).name).toBe('TimeoutError');
  });
});
