/**
 * AcquisitionGate: acquisitions pass freely while heartbeats are on time,
 * go a few at a time, in order, while they are behind, and a waiting one
 * gives up when its signal aborts. Polls come last, and not at all while a
 * heartbeat is overdue, until they have waited their patience. Fake timers
 * drive the gate's rechecks and performance.now(), which its patience is
 * measured on, so no test waits on real time.
 */
import { describe, expect, it } from '@jest/globals';
import { AcquisitionGate, POLL_RECHECK_MS, RenewalsBusyError, type GateLane } from '../../src/acquire/acquisition-gate.js';
import { useFakeTime } from '../../test-kit/jest/fake-time.js';

/** A request the test finishes by hand. */
function deferred(): { promise: Promise<string>; finish: (value: string) => void } {
  let finish!: (value: string) => void;
  const promise = new Promise<string>((resolve) => {
    finish = resolve;
  });
  return { promise, finish };
}

const { advanceTo, settle } = useFakeTime();

function harness(limitWhileBehind: number, limit = 100, pollPatienceMs = 60_000, renewalLimit = 100) {
  const state = { behind: false, overdue: false };
  const gate = new AcquisitionGate({
    heartbeatsBehind: () => state.behind || state.overdue,
    heartbeatsOverdue: () => state.overdue,
    limit,
    limitWhileBehind,
    pollPatienceMs,
    renewalLimit,
  });
  const started: string[] = [];
  const requests = new Map<string, ReturnType<typeof deferred>>();
  const send = (name: string, signal?: AbortSignal, lane?: GateLane): Promise<string> =>
    gate.run(
      () => {
        started.push(name);
        const request = deferred();
        requests.set(name, request);
        return request.promise;
      },
      signal,
      lane,
    );
  const poll = (name: string, signal?: AbortSignal): Promise<string> => send(name, signal, 'poll');
  return { state, gate, started, send, poll, finish: (name: string) => requests.get(name)?.finish(name) };
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
    const gate = new AcquisitionGate({
      heartbeatsBehind: () => state.behind,
      heartbeatsOverdue: () => false,
      limit: 10,
      limitWhileBehind: 1,
      pollPatienceMs: 1_000,
      renewalLimit: 1,
    });
    await expect(gate.run(() => Promise.reject(new Error('throttled')))).rejects.toThrow('throttled');
    expect(gate.inFlight).toBe(0);
    expect(await gate.run(async () => 'next')).toBe('next');
  });

  describe('polls', () => {
    it('while a heartbeat is overdue, none goes out, not even with room under the limit while behind; an acquisition still does', async () => {
      const { state, started, send, poll, gate } = harness(2);
      state.overdue = true;
      void poll('p1');
      void send('a');
      await settle();
      expect(started).toEqual(['a']);
      expect(gate.inFlight).toBe(1);
      expect(gate.waiting).toBe(1);
    });

    it('heartbeats slow to be answered but none overdue (a distant region) hold polls back no more than acquisitions', async () => {
      const { state, started, poll } = harness(2);
      state.behind = true;
      for (const name of ['p1', 'p2', 'p3']) void poll(name);
      await settle();
      expect(started).toEqual(['p1', 'p2']);
    });

    it('held back while a heartbeat is overdue, they go out once it is sent, with nothing else finishing meanwhile', async () => {
      const { state, started, poll } = harness(2);
      state.overdue = true;
      void poll('p1');
      void poll('p2');
      await settle();
      expect(started).toEqual([]);
      state.overdue = false;
      await advanceTo(POLL_RECHECK_MS);
      expect(started).toEqual(['p1', 'p2']);
    });

    it('acquisitions waiting go before polls waiting', async () => {
      const { started, send, poll, finish } = harness(1, 2);
      void send('a');
      void send('b');
      void poll('p1');
      void send('c');
      await settle();
      expect(started).toEqual(['a', 'b']);
      finish('a');
      await settle();
      expect(started).toEqual(['a', 'b', 'c']);
      finish('b');
      await settle();
      expect(started).toEqual(['a', 'b', 'c', 'p1']);
    });

    it("a poll held back rejects with its signal's reason when the call it serves ends, and never runs", async () => {
      const { state, started, poll, gate } = harness(2);
      state.overdue = true;
      const controller = new AbortController();
      const waiting = poll('p1', controller.signal);
      await settle();
      controller.abort(new Error('wait over'));
      await expect(waiting).rejects.toThrow('wait over');
      expect(gate.waiting).toBe(0);
      state.overdue = false;
      await advanceTo(2 * POLL_RECHECK_MS);
      expect(started).toEqual([]);
      expect(gate.inFlight).toBe(0); // no slot taken for it
    });

    it('a poll that has waited its patience goes out while heartbeats stay overdue, within the limit while behind', async () => {
      const patience = 100;
      const { state, started, poll, send } = harness(1, 100, patience);
      state.overdue = true;
      void poll('p1');
      await advanceTo(patience / 2);
      void poll('p2');
      await advanceTo(patience - 1);
      expect(started).toEqual([]);
      // By now p2 has waited its patience too, but the one slot while behind is p1's.
      await advanceTo(patience + POLL_RECHECK_MS);
      expect(started).toEqual(['p1']);
      void send('a');
      await settle();
      expect(started).toEqual(['p1']);
    });

    it('a poll that has waited its patience is not overtaken by acquisitions that came after that', async () => {
      const patience = 100;
      const { started, send, poll, finish } = harness(1, 1, patience);
      void send('a');
      void poll('p1');
      void send('b');
      await advanceTo(patience + POLL_RECHECK_MS);
      void send('c');
      finish('a');
      await settle();
      finish('b');
      await settle();
      finish('p1');
      await settle();
      expect(started).toEqual(['a', 'b', 'p1', 'c']);
    });

    it('a poll queued with the acquisitions after its patience still gives up when the call it serves ends', async () => {
      const patience = 50;
      const { state, started, send, poll, gate, finish } = harness(1, 100, patience);
      send('a').catch(() => undefined);
      state.overdue = true;
      const controller = new AbortController();
      const waiting = poll('p1', controller.signal);
      await advanceTo(patience + POLL_RECHECK_MS);
      controller.abort(new Error('wait over'));
      await expect(waiting).rejects.toThrow('wait over');
      expect(gate.waiting).toBe(0);
      finish('a');
      await settle();
      expect(started).toEqual(['a']);
    });
  });

  describe('renewals of won locks', () => {
    it('while acquisitions fill the limit and more wait, heartbeats behind or not, a renewal goes out at once', async () => {
      const { state, started, send, gate } = harness(1, 3, 60_000, 2);
      for (const name of ['a', 'b', 'c', 'd', 'e']) void send(name);
      await settle();
      expect(started).toEqual(['a', 'b', 'c']);
      state.overdue = true;
      void send('renew-1', undefined, 'renewal');
      void send('renew-2', undefined, 'renewal');
      await settle();
      expect(started).toEqual(['a', 'b', 'c', 'renew-1', 'renew-2']);
      expect(gate.inFlight).toBe(3);
      expect(gate.waiting).toBe(2);
    });

    it('beyond their own limit, a renewal is refused at once, unsent, and one goes again once another finished', async () => {
      const { started, send, finish, gate } = harness(1, 1, 60_000, 1);
      void send('a');
      void send('renew-1', undefined, 'renewal');
      await settle();
      await expect(send('renew-2', undefined, 'renewal')).rejects.toBeInstanceOf(RenewalsBusyError);
      expect(gate.waiting).toBe(0);
      finish('renew-1');
      await settle();
      void send('renew-3', undefined, 'renewal');
      await settle();
      expect(started).toEqual(['a', 'renew-1', 'renew-3']);
    });

    it('a renewal whose signal already aborted is refused, unsent', async () => {
      const { started, send } = harness(1, 1, 60_000, 1);
      const controller = new AbortController();
      controller.abort(new Error('cut off'));
      await expect(send('renew', controller.signal, 'renewal')).rejects.toThrow('cut off');
      expect(started).toEqual([]);
    });
  });
});
