/**
 * admittedForCall: a request of an acquisition call goes through the gate,
 * its call's wait stands still while it waits to be admitted, and `until`
 * ends it whether it still waits or was sent.
 */
import { describe, expect, it } from '@jest/globals';
import { AcquisitionGate } from '../../src/acquire/acquisition-gate.js';
import { admittedForCall, withinBound, type CallDeadline } from '../../src/acquire/request-bound.js';

/** A gate with room for one request, and one renewal, at a time, whatever the heartbeats. */
const oneAtATime = (): AcquisitionGate =>
  new AcquisitionGate({
    heartbeatsBehind: () => true,
    heartbeatsOverdue: () => false,
    limit: 1,
    limitWhileBehind: 1,
    pollPatienceMs: 60_000,
    renewalLimit: 1,
  });

/** A call's deadline that records whether its wait stands still. */
function recordingDeadline(): CallDeadline & { paused: boolean } {
  const call = new AbortController();
  return {
    paused: false,
    pause() {
      this.paused = true;
    },
    resume() {
      this.paused = false;
    },
    requestSignal: call.signal,
    withinBound: (boundMs, request) => withinBound(boundMs, call.signal, request),
  };
}

/** A request that runs until its signal aborts, telling whether it started. */
function untilAborted(started: string[], name: string) {
  return (signal: AbortSignal): Promise<never> =>
    new Promise((_, reject) => {
      started.push(name);
      signal.addEventListener('abort', () => reject(signal.reason), { once: true });
    });
}

describe('admittedForCall', () => {
  it('a request whose `until` aborts while it waits to be admitted rejects, never runs, and its call’s time runs again', async () => {
    const gate = oneAtATime();
    const started: string[] = [];
    const busy = new AbortController();
    const first = admittedForCall(gate, recordingDeadline(), 60_000, untilAborted(started, 'first'), { until: busy.signal });
    const deadline = recordingDeadline();
    const until = new AbortController();
    const waiting = admittedForCall(gate, deadline, 60_000, untilAborted(started, 'second'), { until: until.signal });
    expect(deadline.paused).toBe(true);

    until.abort(new Error('bound passed'));

    await expect(waiting).rejects.toThrow('bound passed');
    expect(deadline.paused).toBe(false);
    expect(started).toEqual(['first']);
    expect(gate.waiting).toBe(0);
    busy.abort(new Error('done'));
    await expect(first).rejects.toThrow('done');
  });

  it('a request sent ends when its `until` aborts', async () => {
    const started: string[] = [];
    const until = new AbortController();
    const sent = admittedForCall(oneAtATime(), recordingDeadline(), 60_000, untilAborted(started, 'renewal'), { until: until.signal });
    await Promise.resolve();
    expect(started).toEqual(['renewal']);

    until.abort(new Error('bound passed'));

    await expect(sent).rejects.toThrow('bound passed');
  });
});
