/**
 * abortableSleep: a timer that an AbortSignal can cut short, leaving neither
 * a timer nor a listener behind.
 */
import { afterEach, beforeEach, describe, expect, it } from '@jest/globals';
import { jest } from '@jest/globals';
import { getEventListeners } from 'node:events';
import { abortableSleep } from '../../src/primitives/abortable-sleep.js';

type Outcome = { state: 'pending' } | { state: 'resolved' } | { state: 'rejected'; reason: unknown };

/** Observes a promise without awaiting it. */
function track(promise: Promise<void>): { readonly outcome: Outcome } {
  const box: { outcome: Outcome } = { outcome: { state: 'pending' } };
  promise.then(
    () => {
      box.outcome = { state: 'resolved' };
    },
    (reason: unknown) => {
      box.outcome = { state: 'rejected', reason };
    },
  );
  return box;
}

/** Runs pending promise callbacks without moving fake time. */
async function flush(): Promise<void> {
  await jest.advanceTimersByTimeAsync(0);
}

const abortListeners = (signal: AbortSignal): number => getEventListeners(signal, 'abort').length;

beforeEach(() => {
  jest.useFakeTimers();
});

afterEach(() => {
  jest.clearAllTimers();
  jest.useRealTimers();
});

describe('abortableSleep', () => {
  it('resolves after ms, not before', async () => {
    const sleep = track(abortableSleep(1_000));
    await jest.advanceTimersByTimeAsync(999);
    expect(sleep.outcome.state).toBe('pending');
    await jest.advanceTimersByTimeAsync(1);
    expect(sleep.outcome.state).toBe('resolved');
    expect(jest.getTimerCount()).toBe(0);
  });

  it('resolves after ms with a signal that never aborts, and removes its listener', async () => {
    const controller = new AbortController();
    const sleep = track(abortableSleep(500, controller.signal));
    expect(abortListeners(controller.signal)).toBe(1);
    await jest.advanceTimersByTimeAsync(499);
    expect(sleep.outcome.state).toBe('pending');
    await jest.advanceTimersByTimeAsync(1);
    expect(sleep.outcome.state).toBe('resolved');
    expect(abortListeners(controller.signal)).toBe(0);
    // Aborting afterwards changes nothing.
    controller.abort(new Error('too late'));
    await flush();
    expect(sleep.outcome.state).toBe('resolved');
  });

  it('treats zero and negative durations as "next tick"', async () => {
    const zero = track(abortableSleep(0));
    const negative = track(abortableSleep(-50));
    await flush();
    expect(zero.outcome.state).toBe('resolved');
    expect(negative.outcome.state).toBe('resolved');
  });

  it('rejects at once with signal.reason when the signal is already aborted, starting no timer', async () => {
    const controller = new AbortController();
    const reason = new Error('already gone');
    controller.abort(reason);
    const promise = abortableSleep(10_000, controller.signal);
    expect(jest.getTimerCount()).toBe(0);
    expect(abortListeners(controller.signal)).toBe(0);
    await expect(promise).rejects.toBe(reason);
  });

  it('rejects with signal.reason the moment the signal aborts mid-wait, leaving no timer or listener', async () => {
    const controller = new AbortController();
    const reason = { custom: 'reason object' };
    const sleep = track(abortableSleep(10_000, controller.signal));
    await jest.advanceTimersByTimeAsync(3_000);
    expect(jest.getTimerCount()).toBe(1);

    controller.abort(reason);
    await flush(); // no fake time passes
    expect(sleep.outcome).toEqual({ state: 'rejected', reason });
    expect((sleep.outcome as { reason: unknown }).reason).toBe(reason);
    expect(jest.getTimerCount()).toBe(0);
    expect(abortListeners(controller.signal)).toBe(0);

    // Nothing fires later.
    await jest.advanceTimersByTimeAsync(20_000);
    expect((sleep.outcome as { reason: unknown }).reason).toBe(reason);
  });

  it('rejects with the default AbortError when aborted without a reason', async () => {
    const controller = new AbortController();
    const promise = abortableSleep(1_000, controller.signal);
    controller.abort();
    await expect(promise).rejects.toMatchObject({ name: 'AbortError' });
    expect(jest.getTimerCount()).toBe(0);
  });

  it('one signal can cut short several sleeps at once', async () => {
    const controller = new AbortController();
    const sleeps = [100, 200, 300].map((ms) => track(abortableSleep(ms, controller.signal)));
    expect(jest.getTimerCount()).toBe(3);
    const reason = new Error('stop');
    controller.abort(reason);
    await flush();
    for (const sleep of sleeps) expect(sleep.outcome).toEqual({ state: 'rejected', reason });
    expect(jest.getTimerCount()).toBe(0);
    expect(abortListeners(controller.signal)).toBe(0);
  });
});
