import { describe, expect, it } from '@jest/globals';
import { getEventListeners } from 'node:events';
import { childAbortController } from '../../src/primitives/child-abort-controller.js';

describe('childAbortController', () => {
  it('children of one parent share one listener on it, and all abort with its reason', () => {
    const parent = new AbortController();
    const children = Array.from({ length: 50 }, () => childAbortController(parent.signal));
    expect(getEventListeners(parent.signal, 'abort')).toHaveLength(1);

    const reason = new Error('stop');
    parent.abort(reason);

    expect(children.map((child) => child.signal.reason as unknown)).toEqual(children.map(() => reason));
  });

  it('a disposed child no longer follows the parent; the last one disposed removes the listener', () => {
    const parent = new AbortController();
    const gone = childAbortController(parent.signal);
    const kept = childAbortController(parent.signal);
    gone.dispose();
    gone.dispose(); // twice is harmless

    parent.abort();

    expect(gone.signal.aborted).toBe(false);
    expect(kept.signal.aborted).toBe(true);
    const other = new AbortController();
    const only = childAbortController(other.signal);
    only.dispose();
    expect(getEventListeners(other.signal, 'abort')).toHaveLength(0);
  });

  it('aborts at once under an aborted parent, and can be aborted on its own', () => {
    const reason = new Error('already');
    expect(childAbortController(AbortSignal.abort(reason)).signal.reason).toBe(reason);
    const parent = new AbortController();
    const child = childAbortController(parent.signal);
    child.abort('mine');
    expect(child.signal.reason).toBe('mine');
    expect(parent.signal.aborted).toBe(false);
  });
});
