/**
 * raceAbort: one waiter's abort ends its own wait for shared work, never the
 * work, and leaves no listener on the signal.
 */
import { describe, expect, it } from '@jest/globals';
import { getEventListeners } from 'node:events';
import { raceAbort } from '../../src/primitives/race-abort.js';

/** A promise settled from outside. */
function shared<T>(): { promise: Promise<T>; resolve: (value: T) => void; reject: (reason: unknown) => void } {
  let resolve!: (value: T) => void;
  let reject!: (reason: unknown) => void;
  const promise = new Promise<T>((res, rej) => {
    resolve = res;
    reject = rej;
  });
  return { promise, resolve, reject };
}

describe('raceAbort', () => {
  it('settles as the work does while the signal does not abort, then leaves no listener', async () => {
    const work = shared<string>();
    const failing = shared<string>();
    const signal = new AbortController().signal;

    const waited = raceAbort(work.promise, signal);
    const failed = raceAbort(failing.promise, signal);
    work.resolve('done');
    failing.reject(new Error('no answer'));

    await expect(waited).resolves.toBe('done');
    await expect(failed).rejects.toThrow('no answer');
    expect(getEventListeners(signal, 'abort')).toHaveLength(0);
  });

  it("rejects the moment the signal aborts, with its reason; others' wait goes on", async () => {
    const work = shared<string>();
    const caller = new AbortController();
    const reason = new Error('the caller gave up');

    const plain = raceAbort(work.promise, caller.signal);
    const other = raceAbort(work.promise, undefined);
    caller.abort(reason);

    await expect(plain).rejects.toBe(reason);
    work.resolve('done');
    await expect(other).resolves.toBe('done');
  });

  it('rejects at once for a signal that has already aborted', async () => {
    const reason = new Error('gone before the call');
    await expect(raceAbort(shared<undefined>().promise, AbortSignal.abort(reason))).rejects.toBe(reason);
  });
});
