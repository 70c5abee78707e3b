/**
 * The chaos checker on logs of semaphore workers (`npm run chaos --
 * --semaphores`): crafted logs with more vouched holders of a semaphore than
 * permits at one instant, and grants other than the permits asked for, must
 * each be reported; a full but never overfull semaphore must not.
 */
import { describe, expect, it } from '@jest/globals';
import { checkChaosLog } from '../../chaos/checker.js';
import type { ChaosEvent } from '../../chaos/events.js';

const s = (seconds: number): string => String(BigInt(Math.round(seconds * 1e9)));
const CHECK = { leaseMs: 1_000, pollMs: 250, marginMs: 500, endNs: BigInt(s(100)) };
const wanting = (worker: string, count: number, seconds: number): ChaosEvent => ({
  type: 'permitsWanting',
  worker,
  semaphore: 'sem',
  permits: 2,
  count,
  atNs: s(seconds),
});
const granted = (worker: string, rvnByPermit: Record<number, string>, seconds: number): ChaosEvent => ({
  type: 'permitsAcquired',
  worker,
  semaphore: 'sem',
  members: Object.entries(rvnByPermit).map(([permit, rvn]) => ({ key: `sem#permit-${permit}`, rvn })),
  atNs: s(seconds),
});
const act = (worker: string, rvns: string[], seconds: number): ChaosEvent => ({
  type: 'groupAct',
  worker,
  acquiredRvns: rvns,
  checkedAtNs: s(seconds),
});

/** A semaphore of 2 permits: a takes both from 1 s to 2 s; b takes one from 2.5 s to 3 s, and c the other at 2.6 s. */
const fullInTurn: ChaosEvent[] = [
  wanting('a', 2, 0.5),
  granted('a', { 1: 'ra1', 2: 'ra2' }, 1),
  act('a', ['ra1', 'ra2'], 2),
  wanting('b', 1, 0.6),
  granted('b', { 2: 'rb' }, 2.5),
  act('b', ['rb'], 3),
  wanting('c', 1, 0.7),
  granted('c', { 1: 'rc' }, 2.6),
  act('c', ['rc'], 2.9),
];

describe('the chaos checker on semaphore workers', () => {
  it('counts a semaphore full in turn as no violation, and reports its permits granted', () => {
    const report = checkChaosLog(fullInTurn, CHECK);
    expect(report).toMatchObject({
      permitAsks: 3,
      permitsGranted: 4,
      permitGrantsByCount: { 1: 2, 2: 1 },
      mostHolders: { sem: 2 },
      overfull: [],
      wrongGrants: [],
      partialGroups: [],
      overlaps: [],
    });
  });

  it('reports a third holder of a semaphore of 2, also one that took a permit key as a plain lock', () => {
    const joiner: ChaosEvent[] = [
      // j took permit 3's key (past the last) as a lock; vouched at 2.8 s, while b and c hold both permits.
      { type: 'acquired', worker: 'j', key: 'sem#permit-3', rvn: 'rj', atNs: s(2.7) },
      { type: 'act', worker: 'j', key: 'sem#permit-3', acquiredRvn: 'rj', checkedAtNs: s(2.8) },
    ];
    const report = checkChaosLog([...fullInTurn, ...joiner], CHECK);
    expect(report.overlaps).toEqual([]); // three different keys: only the semaphore's count sees it
    expect(report.mostHolders).toEqual({ sem: 3 });
    expect(report.overfull).toEqual([
      {
        semaphore: 'sem',
        permits: 2,
        holders: 3,
        atNs: s(2.7),
        holds: [
          { worker: 'b', key: 'sem#permit-2', rvn: 'rb' },
          { worker: 'c', key: 'sem#permit-1', rvn: 'rc' },
          { worker: 'j', key: 'sem#permit-3', rvn: 'rj' },
        ],
      },
    ]);
  });

  it('counts holds touching at an instant as held together, and a hold never vouched for as none', () => {
    // d's grant comes when a's last check vouches (2 s): three holders then. e's grant is never vouched for.
    const touching = [...fullInTurn, wanting('d', 1, 0.8), granted('d', { 1: 'rd' }, 2), act('d', ['rd'], 2.1)];
    expect(checkChaosLog(touching, CHECK).overfull).toMatchObject([{ holders: 3, atNs: s(2) }]);
    const unvouched = [...fullInTurn, wanting('e', 1, 0.8), granted('e', { 1: 're' }, 1.5)];
    expect(checkChaosLog(unvouched, CHECK).overfull).toEqual([]);
  });

  it('reports grants of other permits than asked for: too few, the same permit twice, or one past the last', () => {
    const events: ChaosEvent[] = [
      wanting('a', 2, 0.1),
      granted('a', { 1: 'ra' }, 0.2),
      wanting('b', 2, 0.3),
      {
        type: 'permitsAcquired',
        worker: 'b',
        semaphore: 'sem',
        members: [1, 1].map((p) => ({ key: `sem#permit-${p}`, rvn: `rb${p}` })),
        atNs: s(0.4),
      },
      wanting('c', 1, 0.5),
      granted('c', { 3: 'rc' }, 0.6),
      wanting('d', 1, 0.7),
      granted('d', { 2: 'rd' }, 0.8),
    ];
    expect(checkChaosLog(events, CHECK).wrongGrants.map((g) => [g.worker, g.asked, g.keys.length])).toEqual([
      ['a', 2, 1],
      ['b', 2, 2],
      ['c', 1, 1],
    ]);
  });

  it("does not judge how soon a killed holder's permit is taken again: a waiter takes whichever permit is free", () => {
    const events: ChaosEvent[] = [
      wanting('a', 1, 0.1),
      granted('a', { 1: 'ra' }, 0.2),
      { type: 'kill', worker: 'a', atNs: s(0.3) },
      granted('b', { 1: 'rb' }, 9),
    ];
    expect(checkChaosLog(events, CHECK).slowTakeovers).toEqual([]);
  });
});
