/**
 * AcquisitionGate: acquisitions pass freely while heartbeats are on time,
 * go a few at a time, in order, while they are behind, and a waiting one
 * gives up when its signal aborts.
 */
import { describe, expect, it } from '@jest/globals';
import { AcquisitionGate } from '../../src/acquire/acquisition-gate.js';

/** A request the test finishes by hand. */
function deferred(): { promise: Promise<string>; finish: (value: string) => void } {
  let finish!: (value: string) => void;
  const promise = new Promise<string>((resolve) => {
    finish = resolve;
  });
  return { promise, finish };
}

const settle = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

function harness(limitWhileBehind: number, limit = 100) {
  const state = { behind: false };
  const gate = new AcquisitionGate({ heartbeatsBehind: () => state.behind, limit, limitWhileBehind });
  const started: string[] = [];
  const requests = new Map<string, ReturnType<typeof deferred>>();
  const send = (name: string, signal?: AbortSignal): Promise<string> =>
    gate.run(() => {
      started.push(name);
      const request = deferred();
      requests.set(name, request);
      return request.promise;
    }, signal);
  return { state, gate, started, send, finish: (name: string) => requests.get(name)?.finish(name) };
}

describe('AcquisitionGate', () => {
  it('while heartbeats are on time, lets requests through up to its limit, and the rest in order as requests finish', async () => {
    const { started, send, finish, gate } = harness(2, 6);
    for (let i = 0; i < 10; i++) void send(`r${i}`);
    await settle();
    expect(started).toEqual(['r0', 'r1', 'r2', 'r3', 'r4', 'r5']);
    expect(gate.inFlight).toBe(6);
    expect(gate.waiting).toBe(4);
    finish('r3');
    finish('r0');
    await settle();
    expect(started).toEqual(['r0', 'r1', 'r2', 'r3', 'r4', 'r5', 'r6', 'r7']);
    expect(gate.inFlight).toBe(6);
  });

  it('while heartbeats are behind, lets only the limit through and the rest in order as requests finish', async () => {
    const { state, started, send, finish, gate } = harness(2);
    state.behind = true;
    const results = ['a', 'b', 'c', 'd'].map((name) => send(name));
    await settle();
    expect(started).toEqual(['a', 'b']);
    expect(gate.waiting).toBe(2);
    finish('b');
    await settle();
    expect(started).toEqual(['a', 'b', 'c']);
    finish('a');
    finish('c');
    await settle();
    expect(started).toEqual(['a', 'b', 'c', 'd']);
    finish('d');
    expect(await Promise.all(results)).toEqual(['a', 'b', 'c', 'd']);
    expect(gate.inFlight).toBe(0);
  });

  it('lets the waiting requests in, up to the limit, at the next completion once heartbeats are on time again', async () => {
    const { state, started, send, finish } = harness(1, 3);
    state.behind = true;
    for (const name of ['a', 'b', 'c', 'd']) void send(name);
    await settle();
    expect(started).toEqual(['a']);
    state.behind = false;
    finish('a');
    await settle();
    expect(started).toEqual(['a', 'b', 'c', 'd']);
    void send('e');
    await settle();
    expect(started).toEqual(['a', 'b', 'c', 'd']);
  });

  it('a new request does not overtake those waiting', async () => {
    const { state, started, send, finish } = harness(1);
    state.behind = true;
    void send('a');
    void send('b');
    await settle();
    state.behind = false;
    void send('late'); // room by the heartbeats' measure, but 'b' waits
    await settle();
    expect(started).toEqual(['a']);
    finish('a');
    await settle();
    expect(started).toEqual(['a', 'b', 'late']);
  });

  it("a waiting request rejects with its signal's reason when it aborts, and never runs", async () => {
    const { state, started, send, finish, gate } = harness(1);
    state.behind = true;
    void send('a');
    const controller = new AbortController();
    const waiting = send('b', controller.signal);
    void send('c');
    await settle();
    controller.abort(new Error('caller gave up'));
    await expect(waiting).rejects.toThrow('caller gave up');
    expect(gate.waiting).toBe(1);
    finish('a');
    await settle();
    expect(started).toEqual(['a', 'c']);
  });

  it('a request whose signal already aborted is refused at once', async () => {
    const { state, send, started } = harness(1);
    state.behind = true;
    void send('a');
    await expect(send('b', AbortSignal.abort(new Error('too late')))).rejects.toThrow('too late');
    expect(started).toEqual(['a']);
  });

  it('a request that fails frees its place', async () => {
    const state = { behind: true };
    const gate = new AcquisitionGate({ heartbeatsBehind: () => state.behind, limit: 10, limitWhileBehind: 1 });
    await expect(gate.run(() => Promise.reject(new Error('throttled')))).rejects.toThrow('throttled');
    expect(gate.inFlight).toBe(0);
    expect(await gate.run(async () => 'next')).toBe('next');
  });
});
