/**
 * boundedSignal: a request's signal that follows the caller's and aborts on
 * its own bound, and says afterwards which of the two ended it.
 */
import { afterEach, beforeEach, describe, expect, it, jest } from '@jest/globals';
import { getEventListeners } from 'node:events';
import { boundedSignal } from '../../src/primitives/bounded-signal.js';

describe('boundedSignal', () => {
  beforeEach(() => {
    jest.useFakeTimers();
  });
  afterEach(() => {
    jest.useRealTimers();
  });

  it('aborts with a TimeoutError once the bound passes, and names it as the timeout', () => {
    const caller = new AbortController();
    const bound = boundedSignal(1_000, caller.signal);

    jest.advanceTimersByTime(999);
    expect(bound.signal.aborted).toBe(false);
    expect(bound.timeout).toBeUndefined();
    jest.advanceTimersByTime(1);

    expect(bound.signal.aborted).toBe(true);
    expect(bound.timeout).toBe(bound.signal.reason);
    expect(bound.timeout).toMatchObject({ name: 'TimeoutError', message: expect.stringContaining('1000 ms') });
    bound.dispose();
  });

  it("follows the caller's signal with its reason, which is no timeout, even if the bound passes later", () => {
    const caller = new AbortController();
    const bound = boundedSignal(1_000, caller.signal);
    const reason = new Error('the caller gave up');

    caller.abort(reason);
    jest.advanceTimersByTime(1_000);

    expect(bound.signal.reason).toBe(reason);
    expect(bound.timeout).toBeUndefined();
    bound.dispose();
  });

  it('once disposed, neither the bound nor the caller aborts it, and no listener or timer is left', () => {
    const caller = new AbortController();
    const bound = boundedSignal(1_000, caller.signal);

    bound.dispose();

    expect(getEventListeners(caller.signal, 'abort')).toHaveLength(0);
    expect(jest.getTimerCount()).toBe(0);
    caller.abort();
    expect(bound.signal.aborted).toBe(false);
  });

  it('without a caller signal, only the bound ends it', () => {
    const bound = boundedSignal(0, undefined);
    jest.advanceTimersByTime(1); // a bound of at least 1 ms
    expect(bound.timeout).toMatchObject({ name: 'TimeoutError' });
    bound.dispose();
  });
});
