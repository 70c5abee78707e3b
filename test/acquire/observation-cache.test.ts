/**
 * LockObservationCache: the memory behind `shouldSkipBlockingWait`
 * (PROTOCOL.md §5.5). Timed with an injected manual clock.
 */
import { describe, expect, it } from '@jest/globals';
import type { MonotonicClock } from '../../src/base/clock.js';
import { LockObservationCache } from '../../src/acquire/observation-cache.js';

function manualClock(start = 1_000): MonotonicClock & { t: number } {
  const clock = {
    t: start,
    now(): number {
      return clock.t;
    },
  };
  return clock;
}

describe('LockObservationCache: staleness', () => {
  it('the first observation of a lock is never stale', () => {
    const clock = manualClock();
    const cache = new LockObservationCache(10, clock);
    expect(cache.isStale('L', 'rvn-1', 100)).toBe(false);
    expect(cache.size).toBe(1);
    // Not even with a zero lease.
    expect(cache.isStale('M', 'rvn-1', 0)).toBe(false);
  });

  it('the same RVN becomes stale only once strictly more than the lease has passed', () => {
    const clock = manualClock(5_000);
    const cache = new LockObservationCache(10, clock);
    cache.isStale('L', 'A', 100);
    clock.t = 5_050;
    expect(cache.isStale('L', 'A', 100)).toBe(false);
    clock.t = 5_100; // exactly the lease: not yet
    expect(cache.isStale('L', 'A', 100)).toBe(false);
    clock.t = 5_100.5;
    expect(cache.isStale('L', 'A', 100)).toBe(true);
    clock.t = 5_101;
    expect(cache.isStale('L', 'A', 100)).toBe(true);
    expect(cache.size).toBe(1);
  });

  it('follows the example of §5.5: lease 100, call at t=0 unavailable, call at t=101 takes over', () => {
    const clock = manualClock(0);
    const cache = new LockObservationCache(10_000, clock);
    expect(cache.isStale('lock', 'rvn', 100)).toBe(false);
    clock.t = 101;
    expect(cache.isStale('lock', 'rvn', 100)).toBe(true);
  });

  it('repeated observations of the same RVN do not refresh the entry', () => {
    const clock = manualClock(0);
    const cache = new LockObservationCache(10, clock);
    cache.isStale('L', 'A', 100);
    for (const t of [20, 40, 60, 80, 99]) {
      clock.t = t;
      expect(cache.isStale('L', 'A', 100)).toBe(false);
    }
    clock.t = 101; // 101 after the first observation, 2 after the last
    expect(cache.isStale('L', 'A', 100)).toBe(true);
  });

  it('a different RVN restarts the timer', () => {
    const clock = manualClock(0);
    const cache = new LockObservationCache(10, clock);
    cache.isStale('L', 'A', 100);
    clock.t = 90;
    expect(cache.isStale('L', 'B', 100)).toBe(false);
    clock.t = 150; // 150 after A, 60 after B
    expect(cache.isStale('L', 'B', 100)).toBe(false);
    clock.t = 190;
    expect(cache.isStale('L', 'B', 100)).toBe(false);
    clock.t = 191;
    expect(cache.isStale('L', 'B', 100)).toBe(true);
    expect(cache.size).toBe(1);
  });

  it('an RVN that comes back (A, B, A) is timed from its latest first observation', () => {
    const clock = manualClock(0);
    const cache = new LockObservationCache(10, clock);
    cache.isStale('L', 'A', 100);
    clock.t = 50;
    cache.isStale('L', 'B', 100);
    clock.t = 120;
    expect(cache.isStale('L', 'A', 100)).toBe(false); // would be stale if A's first entry had survived
    clock.t = 220;
    expect(cache.isStale('L', 'A', 100)).toBe(false);
    clock.t = 221;
    expect(cache.isStale('L', 'A', 100)).toBe(true);
  });

  it('times staleness with the lease read at the first observation', () => {
    const clock = manualClock(0);
    const cache = new LockObservationCache(10, clock);
    cache.isStale('L', 'A', 100);
    clock.t = 150;
    // A later read claims a longer lease for the same RVN; the entry keeps its own.
    expect(cache.isStale('L', 'A', 1_000)).toBe(true);

    cache.isStale('M', 'A', 1_000);
    clock.t = 300;
    expect(cache.isStale('M', 'A', 10)).toBe(false);
  });

  it('keeps locks apart, including the same RVN on two locks', () => {
    const clock = manualClock(0);
    const cache = new LockObservationCache(10, clock);
    cache.isStale('L1', 'same', 100);
    clock.t = 60;
    cache.isStale('L2', 'same', 100);
    clock.t = 101;
    expect(cache.isStale('L1', 'same', 100)).toBe(true);
    expect(cache.isStale('L2', 'same', 100)).toBe(false);
    expect(cache.size).toBe(2);
  });

  it('forget() drops the entry, so the next observation starts over', () => {
    const clock = manualClock(0);
    const cache = new LockObservationCache(10, clock);
    cache.isStale('L', 'A', 100);
    cache.isStale('M', 'A', 100);
    cache.forget('L');
    expect(cache.size).toBe(1);
    clock.t = 500;
    expect(cache.isStale('L', 'A', 100)).toBe(false);
    expect(cache.isStale('M', 'A', 100)).toBe(true); // untouched
    cache.forget('nope'); // unknown id: harmless
    expect(cache.size).toBe(2);
  });
});

describe('LockObservationCache: capacity and eviction', () => {
  it('never holds more than its capacity', () => {
    const clock = manualClock(0);
    const cache = new LockObservationCache(5, clock);
    for (let i = 0; i < 100; i++) {
      clock.t = i;
      expect(cache.isStale(`L${i}`, 'A', 1_000_000)).toBe(false);
      expect(cache.size).toBe(Math.min(i + 1, 5));
    }
  });

  it('a capacity of one keeps only the latest lock', () => {
    const clock = manualClock(0);
    const cache = new LockObservationCache(1, clock);
    cache.isStale('L', 'A', 10);
    cache.isStale('M', 'A', 10);
    expect(cache.size).toBe(1);
    clock.t = 100;
    expect(cache.isStale('M', 'A', 10)).toBe(true);
  });

  it('a new RVN for a cached lock evicts nothing', () => {
    const clock = manualClock(0);
    const cache = new LockObservationCache(2, clock);
    cache.isStale('a', 'A', 1_000);
    cache.isStale('b', 'A', 1_000);
    clock.t = 10;
    cache.isStale('a', 'B', 1_000);
    expect(cache.size).toBe(2);
    clock.t = 1_001;
    expect(cache.isStale('b', 'A', 1_000)).toBe(true); // b was kept
  });

  it('when full, drops entries older than twice their lease before any other', () => {
    const clock = manualClock(0);
    const cache = new LockObservationCache(3, clock);
    cache.isStale('old-long', 'A', 1_000); // oldest in insertion order, but still useful
    cache.isStale('short', 'A', 10); // useless after 20 ms
    cache.isStale('long', 'A', 1_000);
    clock.t = 25;
    cache.isStale('new', 'A', 1_000);
    expect(cache.size).toBe(3);

    clock.t = 1_001;
    expect(cache.isStale('old-long', 'A', 1_000)).toBe(true);
    expect(cache.isStale('long', 'A', 1_000)).toBe(true);
    expect(cache.size).toBe(3);
    // 'short' went: it is a first observation again (and evicts to make room).
    expect(cache.isStale('short', 'A', 10)).toBe(false);
  });

  it('drops every entry older than twice its lease, not just as many as needed', () => {
    const clock = manualClock(0);
    const cache = new LockObservationCache(4, clock);
    cache.isStale('a', 'A', 10);
    cache.isStale('b', 'A', 10);
    cache.isStale('c', 'A', 1_000);
    cache.isStale('d', 'A', 10);
    clock.t = 21;
    cache.isStale('e', 'A', 1_000);
    expect(cache.size).toBe(2); // c and e
    clock.t = 1_001;
    expect(cache.isStale('c', 'A', 1_000)).toBe(true);
  });

  it('an entry exactly twice its lease old is not yet "older than twice its lease"', () => {
    const clock = manualClock(0);
    const cache = new LockObservationCache(3, clock);
    cache.isStale('first', 'A', 1_000);
    cache.isStale('edge', 'A', 10);
    cache.isStale('third', 'A', 1_000);
    clock.t = 20; // edge is exactly 2 × 10 old
    cache.isStale('new', 'A', 1_000);
    // Nothing was over age, so the oldest went instead of 'edge'.
    expect(cache.size).toBe(3);
    clock.t = 21;
    expect(cache.isStale('edge', 'A', 10)).toBe(true);
    expect(cache.isStale('first', 'A', 1_000)).toBe(false); // evicted, re-cached
  });

  it('when nothing is over age, drops the oldest observation', () => {
    const clock = manualClock(0);
    const cache = new LockObservationCache(3, clock);
    for (const [i, id] of ['a', 'b', 'c'].entries()) {
      clock.t = i;
      cache.isStale(id, 'A', 1_000);
    }
    clock.t = 3;
    cache.isStale('d', 'A', 1_000);
    expect(cache.size).toBe(3);
    clock.t = 1_003.5;
    expect(cache.isStale('b', 'A', 1_000)).toBe(true);
    expect(cache.isStale('c', 'A', 1_000)).toBe(true);
    expect(cache.isStale('d', 'A', 1_000)).toBe(true);
  });

  it('when nothing is over age, a lock whose RVN just changed is not evicted before older observations', () => {
    const clock = manualClock(0);
    const cache = new LockObservationCache(2, clock);
    cache.isStale('a', 'A', 1_000); // t=0
    clock.t = 1;
    cache.isStale('b', 'A', 1_000); // t=1
    clock.t = 2;
    cache.isStale('a', 'B', 1_000); // a re-observed at t=2: now the newest observation
    clock.t = 3;
    cache.isStale('c', 'A', 1_000); // must evict the oldest: b
    clock.t = 1_002.5;
    expect(cache.isStale('a', 'B', 1_000)).toBe(true);
  });
});
