/**
 * Hand-over times of the benchmarks (bench/hand-over.ts), on crafted
 * sections: a lock's counts only changes of worker; a counter item's pairs
 * a release from full with the next grant in the item's order, whatever
 * order the workers' sections came in.
 */
import { describe, expect, it } from '@jest/globals';
import { counterHandOvers, lockHandOvers, medianHandOverMs, type CounterChange } from '../../bench/hand-over.js';

const grant = (change: number, count: number, at: number, worker: number): CounterChange => ({ change, count, kind: 'grant', at, worker });
const release = (change: number, count: number, at: number, worker: number): CounterChange => ({ change, count, kind: 'release', at, worker });

describe('lockHandOvers', () => {
  it('times the idle lock from one worker to another, not a worker taking it again', () => {
    const sections = [
      { start: 0, end: 10, worker: 0 },
      { start: 12, end: 20, worker: 0 },
      { start: 25, end: 30, worker: 1 },
      { start: 31, end: 40, worker: 0 },
    ];
    expect(lockHandOvers(sections)).toEqual([5, 1]);
  });
});

describe('counterHandOvers', () => {
  it('pairs a release from full with the next grant, in the order of the item’s changes', () => {
    const changes = [
      grant(1, 1, 0, 0),
      grant(2, 2, 1, 1),
      // From full: the first place freed, stays freed through b's release.
      release(3, 1, 10, 0),
      release(4, 0, 12, 1),
      grant(5, 1, 30, 2),
      grant(6, 2, 31, 3),
      // From full, but c takes its own place back.
      release(7, 1, 40, 2),
      grant(8, 2, 41, 2),
      // From full, but change 10 was not recorded: its grant may have taken the place.
      release(9, 1, 50, 3),
      grant(11, 2, 60, 4),
    ];
    expect(counterHandOvers(changes.reverse(), 2)).toEqual([20]);
  });

  it('pairs no release that came while places stood free', () => {
    const changes = [grant(1, 1, 0, 0), grant(2, 2, 1, 1), release(3, 1, 10, 0), grant(4, 2, 30, 2)];
    expect(counterHandOvers(changes, 3)).toEqual([]);
  });
});

describe('medianHandOverMs', () => {
  it('is the median, leaving its argument as it was, and null without hand-overs', () => {
    const handOvers = [3, 1, 2];
    expect(medianHandOverMs(handOvers)).toBe(2);
    expect(handOvers).toEqual([3, 1, 2]);
    expect(medianHandOverMs([])).toBeNull();
  });
});
