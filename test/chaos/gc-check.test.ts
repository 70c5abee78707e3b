/**
 * The chaos checker on logs of a `--gc` run: crafted logs in which the gc's
 * delete took the item of a hold vouched for afterwards (by the RVN of its
 * acquisition, or, for a delete that succeeded, by a hold begun before it)
 * must be reported; deletes of items whose holds had ended, or that a later
 * holder took with another RVN, must not.
 */
import { describe, expect, it } from '@jest/globals';
import { checkChaosLog } from '../../chaos/checker.js';
import type { ChaosEvent, GcDeleteEvent } from '../../chaos/events.js';

const s = (seconds: number): string => String(BigInt(Math.round(seconds * 1e9)));
const CHECK = { leaseMs: 1_000, pollMs: 250, marginMs: 500, endNs: BigInt(s(100)) };
const hold = (worker: string, rvn: string, from: number, lastCheck: number): ChaosEvent[] => [
  { type: 'acquired', worker, key: 'k', rvn, atNs: s(from) },
  { type: 'act', worker, key: 'k', acquiredRvn: rvn, checkedAtNs: s(lastCheck) },
];
const gcDelete = (rvn: string, sentAt: number, outcome: GcDeleteEvent['outcome']): ChaosEvent => ({
  type: 'gcDelete',
  worker: 'gc',
  key: 'k',
  rvn,
  sentAtNs: s(sentAt),
  atNs: s(sentAt + 0.05),
  outcome,
});
const judged = (events: ChaosEvent[]) => checkChaosLog(events, CHECK).heldItemsDeleted.map((d) => [d.rvn, d.outcome, d.hold.worker]);

describe('the chaos checker on the gc worker', () => {
  it('reports a delete at the RVN a hold was acquired with, when the hold was vouched for afterwards, whatever its outcome', () => {
    for (const outcome of ['deleted', 'taken', 'other'] as const) {
      expect(judged([...hold('a', 'r1', 1, 5.5), gcDelete('r1', 5, outcome)])).toEqual([['r1', outcome, 'a']]);
    }
  });

  it("reports a delete that succeeded during a hold begun before it, at another RVN (the hold's heartbeat)", () => {
    // a acquired with r1 and heartbeated to r2 (not in the log); the gc deleted r2 at 5 s and a acted at 6 s.
    expect(judged([...hold('a', 'r1', 1, 6), gcDelete('r2', 5, 'deleted')])).toEqual([['r2', 'deleted', 'a']]);
    // Refused, or of no definite answer: a heartbeat after the gc's read may have saved the item.
    expect(judged([...hold('a', 'r1', 1, 6), gcDelete('r2', 5, 'taken'), gcDelete('r3', 5.2, 'other')])).toEqual([]);
  });

  it('accepts deletes of items whose holds had ended, and holds begun after the delete with another RVN', () => {
    const events: ChaosEvent[] = [
      // c's acquisition was never vouched for.
      { type: 'acquired', worker: 'c', key: 'k', rvn: 'r0', atNs: s(0.1) },
      gcDelete('r0', 0.5, 'deleted'),
      ...hold('a', 'r1', 1, 4.9),
      gcDelete('r1', 5, 'deleted'),
      // b took the key afresh after the delete was sent.
      ...hold('b', 'r2', 5.01, 7),
    ];
    expect(judged(events)).toEqual([]);
  });

  it('counts the passes, their errors, the deletes by outcome and the items left by reason', () => {
    const events: ChaosEvent[] = [
      { type: 'gcPass', worker: 'gc', deleted: 1, left: { moved: 2 }, atNs: s(3) },
      { type: 'gcPass', worker: 'gc', deleted: 0, left: {}, error: 'DynamoDBTimeoutError', atNs: s(4) },
      { type: 'gcPass', worker: 'gc', deleted: 0, left: { moved: 1, gone: 1 }, atNs: s(6) },
      gcDelete('r1', 2, 'deleted'),
      gcDelete('r2', 2, 'taken'),
    ];
    expect(checkChaosLog(events, CHECK)).toMatchObject({
      gcPasses: 2,
      gcPassErrors: { DynamoDBTimeoutError: 1 },
      gcDeletes: { deleted: 1, taken: 1 },
      gcLeft: { moved: 3, gone: 1 },
    });
  });
});
