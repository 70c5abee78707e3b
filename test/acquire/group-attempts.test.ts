/**
 * What a read of every key says of a group transaction whose outcome was
 * unknown: a transaction is all or nothing, so every key with its RVN under
 * our owner name is the group ours; some only, applied and overtaken since;
 * none, nothing known.
 */
import { describe, expect, it } from '@jest/globals';
import { acquisitionsOf, readAttempt, type GroupAttempt } from '../../src/acquire/group-attempts.js';
import type { LockObservation } from '../../src/dynamodb/read-lock.js';
import type { LockRecordToWrite } from '../../src/protocol/index.js';

const record = (partitionKey: string): LockRecordToWrite => ({
  partitionKey,
  ownerName: 'me',
  leaseDurationMs: 1_000,
  recordVersionNumber: `rvn-${partitionKey}`,
  data: undefined,
  additionalAttributes: {},
});
const attempt: GroupAttempt = {
  members: ['a', 'b', 'c'].map((key) => ({ record: record(key), path: { kind: 'absent' } })),
  lookupTime: 500,
  lookupWallTime: 1_700_000_000_000,
  tokens: [3n, undefined, 7n],
};
const ours = (key: string): LockObservation => ({ record: { ...record(key), isReleased: false }, observedAt: 600 });
const theirs = (key: string): LockObservation => ({ record: { ...record(key), ownerName: 'other', isReleased: false }, observedAt: 600 });

describe('readAttempt', () => {
  it('every key with its RVN under our owner name: ours', () => {
    expect(readAttempt(attempt, [ours('a'), ours('b'), ours('c')], 'me')).toEqual({ kind: 'ours' });
  });

  it('some keys only: applied, and the others taken over since; names the keys still ours', () => {
    expect(readAttempt(attempt, [ours('a'), theirs('b'), undefined], 'me')).toEqual({ kind: 'overtaken', ours: [0] });
  });

  it('our RVN marked released, or under another owner name, is not ours', () => {
    const released = { ...ours('a'), record: { ...ours('a').record, isReleased: true } };
    expect(readAttempt(attempt, [released, theirs('b'), undefined], 'me')).toEqual({ kind: 'unseen' });
    expect(readAttempt(attempt, [ours('a'), ours('b'), ours('c')], 'someone else')).toEqual({ kind: 'unseen' });
  });

  it('another RVN of ours (a later write) is not this attempt', () => {
    const later = { ...ours('a'), record: { ...ours('a').record, recordVersionNumber: 'later' } };
    expect(readAttempt(attempt, [later, ours('b'), ours('c')], 'me')).toEqual({ kind: 'overtaken', ours: [1, 2] });
  });
});

describe('acquisitionsOf', () => {
  it("counts every lock's lease from the attempt's departure, with its own fencing token", () => {
    const acquisitions = acquisitionsOf(attempt, {});
    expect(acquisitions.map(({ lookupTime, lookupWallTime, fencingToken }) => ({ lookupTime, lookupWallTime, fencingToken }))).toEqual([
      { lookupTime: 500, lookupWallTime: 1_700_000_000_000, fencingToken: 3n },
      { lookupTime: 500, lookupWallTime: 1_700_000_000_000, fencingToken: undefined },
      { lookupTime: 500, lookupWallTime: 1_700_000_000_000, fencingToken: 7n },
    ]);
    expect(acquisitions.map(({ record: written }) => written.recordVersionNumber)).toEqual(['rvn-a', 'rvn-b', 'rvn-c']);
  });
});
