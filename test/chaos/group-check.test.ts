/**
 * The chaos checker on logs of group workers (`npm run chaos -- --groups`):
 * crafted logs with an overlap on one key of a group, a group acquired with
 * fewer keys than asked, and an act that checked only part of its group
 * must each be reported; a clean log must not.
 */
import { describe, expect, it } from '@jest/globals';
import { checkChaosLog } from '../../chaos/checker.js';
import type { ChaosEvent } from '../../chaos/events.js';
import { checkGroups } from '../../chaos/group-check.js';

const s = (seconds: number): string => String(BigInt(Math.round(seconds * 1e9)));
const CHECK = { leaseMs: 1_000, pollMs: 250, marginMs: 500, endNs: BigInt(s(100)) };
const groupAcquired = (worker: string, rvnByKey: Record<string, string>, seconds: number): ChaosEvent => ({
  type: 'groupAcquired',
  worker,
  members: Object.entries(rvnByKey).map(([key, rvn]) => ({ key, rvn })),
  atNs: s(seconds),
});

/** g takes a and b together at 1 s and acts under both at 1.5 s and 2 s, then releases them. */
const cleanGroup: ChaosEvent[] = [
  { type: 'groupWanting', worker: 'g', keys: ['b', 'a'], atNs: s(0.5) },
  groupAcquired('g', { b: 'rb', a: 'ra' }, 1),
  { type: 'groupAct', worker: 'g', acquiredRvns: ['rb', 'ra'], checkedAtNs: s(1.5) },
  { type: 'groupAct', worker: 'g', acquiredRvns: ['ra', 'rb'], checkedAtNs: s(2) },
  { type: 'released', worker: 'g', key: 'a', acquiredRvn: 'ra', atNs: s(2.1) },
  { type: 'released', worker: 'g', key: 'b', acquiredRvn: 'rb', atNs: s(2.1) },
];

describe('the chaos checker on group workers', () => {
  it('counts a group held whole, next to single holds of its keys before and after it, as no violation', () => {
    const events: ChaosEvent[] = [
      { type: 'acquired', worker: 's', key: 'a', rvn: 'r0', atNs: s(0.1) },
      { type: 'act', worker: 's', key: 'a', acquiredRvn: 'r0', checkedAtNs: s(0.9) },
      ...cleanGroup,
      { type: 'acquired', worker: 's', key: 'b', rvn: 'r9', atNs: s(2.2) },
      { type: 'act', worker: 's', key: 'b', acquiredRvn: 'r9', checkedAtNs: s(2.3) },
    ];
    const report = checkChaosLog(events, CHECK);
    expect(report).toMatchObject({ groupAsks: 1, groupAcquisitions: 1, partialGroups: [], overlaps: [], acquisitions: 4, acts: 4 });
  });

  it("reports a group's act while another worker held one of its keys", () => {
    const events: ChaosEvent[] = [
      ...cleanGroup,
      // s holds b from 1.8 s and acts at 1.9 s: inside g's checked hold of b (1 s to 2 s).
      { type: 'acquired', worker: 's', key: 'b', rvn: 'r9', atNs: s(1.8) },
      { type: 'act', worker: 's', key: 'b', acquiredRvn: 'r9', checkedAtNs: s(1.9) },
    ];
    const report = checkChaosLog(events, CHECK);
    expect(report.overlaps).toHaveLength(1);
    expect(report.overlaps[0]).toMatchObject({ key: 'b', first: { worker: 'g', rvn: 'rb' }, second: { worker: 's' }, overlapMs: 100 });
  });

  it('reports two groups sharing a key at once', () => {
    const other: ChaosEvent[] = [
      { type: 'groupWanting', worker: 'h', keys: ['a', 'c'], atNs: s(0.2) },
      groupAcquired('h', { a: 'ra2', c: 'rc' }, 1.7),
      { type: 'groupAct', worker: 'h', acquiredRvns: ['ra2', 'rc'], checkedAtNs: s(1.8) },
    ];
    const report = checkChaosLog([...cleanGroup, ...other], CHECK);
    expect(report.overlaps.map((o) => [o.key, o.first.worker, o.second.worker])).toEqual([['a', 'g', 'h']]);
    expect(report.groupAcquisitions).toBe(2);
  });

  it('reports a group acquired with only some of the keys asked for', () => {
    const events: ChaosEvent[] = [
      { type: 'groupWanting', worker: 'g', keys: ['a', 'b', 'c'], atNs: s(0.5) },
      groupAcquired('g', { a: 'ra', c: 'rc' }, 1),
      { type: 'groupAct', worker: 'g', acquiredRvns: ['ra', 'rc'], checkedAtNs: s(1.5) },
    ];
    expect(checkChaosLog(events, CHECK).partialGroups).toEqual([
      { worker: 'g', at: 'acquired', expected: ['a', 'b', 'c'], found: ['a', 'c'], atNs: s(1) },
    ]);
  });

  it('reports an act that checked only some locks of its group, as a group act or a single one', () => {
    const events: ChaosEvent[] = [
      ...cleanGroup.slice(0, 2),
      { type: 'groupAct', worker: 'g', acquiredRvns: ['ra'], checkedAtNs: s(1.5) },
      { type: 'act', worker: 'g', key: 'b', acquiredRvn: 'rb', checkedAtNs: s(1.6) },
    ];
    expect(checkGroups(events).partialGroups).toEqual([
      { worker: 'g', at: 'act', expected: ['ra', 'rb'], found: ['ra'], atNs: s(1.5) },
      { worker: 'g', at: 'act', expected: ['ra', 'rb'], found: ['rb'], atNs: s(1.6) },
    ]);
  });

  it('reports a group acquired that nobody asked for', () => {
    const events: ChaosEvent[] = [cleanGroup[1] as ChaosEvent];
    expect(checkGroups(events).partialGroups).toMatchObject([{ worker: 'g', at: 'acquired', expected: [], found: ['a', 'b'] }]);
  });

  it('marks a slow takeover by a group, and leaves one by a single worker unmarked', () => {
    const killed: ChaosEvent[] = [
      { type: 'acquired', worker: 's', key: 'a', rvn: 'r0', atNs: s(0.1) },
      { type: 'kill', worker: 's', atNs: s(0.2) },
    ];
    // g asked at 0.1 s and took a with b only at 4 s, once b was free too: past lease + poll + margin (1.75 s).
    const byGroup = checkChaosLog(
      [...killed, { ...cleanGroup[0], atNs: s(0.1) } as ChaosEvent, { ...cleanGroup[1], atNs: s(4) } as ChaosEvent],
      CHECK,
    );
    expect(byGroup.slowTakeovers).toEqual([{ key: 'a', worker: 's', fault: 'kill', ms: 3_800, reacquired: true, byGroup: true }]);
    const bySingle = checkChaosLog([...killed, { type: 'acquired', worker: 't', key: 'a', rvn: 'r1', atNs: s(4) }], CHECK);
    expect(bySingle.slowTakeovers).toEqual([{ key: 'a', worker: 's', fault: 'kill', ms: 3_800, reacquired: true }]);
  });
});
