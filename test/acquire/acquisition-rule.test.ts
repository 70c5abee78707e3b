/**
 * The acquisition rule (src/acquire/acquisition-rule.ts), one row per path of
 * Java's decision as PROTOCOL.md §5.2 and §5.5 state them, and the shortcuts
 * of §9.2 that act on a refused write's ALL_OLD item. A sort-key lock follows
 * the same rule: the key plays no part in it.
 */
import { describe, expect, it } from '@jest/globals';
import { decide, heldByAnother, type AcquisitionRules, type Decision, type Sight } from '../../src/acquire/acquisition-rule.js';
import type { Acquisition } from '../../src/acquire/steps.js';
import type { LockObservation } from '../../src/dynamodb/read-lock.js';
import { lockObservation } from '../../test-kit/acquisition-parts.js';
import type { LockRecord } from '../../src/protocol/index.js';

const LEASE = 1_000;

const observation = (observedAt: number, fields: Partial<LockRecord> = {}): LockObservation => lockObservation(observedAt, LEASE, fields);

const held = observation(900);
/** The first observation of `held`'s RVN, from which the watch times it. */
const firstSeen = observation(100);
const released = observation(900, { isReleased: true });
const ourWrite: Acquisition = {
  record: {
    partitionKey: 'k',
    ownerName: 'me',
    leaseDurationMs: LEASE,
    recordVersionNumber: 'rvn-ours',
    data: undefined,
    additionalAttributes: {},
  },
  lookupTime: 0,
  lookupWallTime: undefined,
  additionalAttributes: {},
};
const ourItem = observation(900, { ownerName: 'me', recordVersionNumber: 'rvn-ours' });

const SKIP: AcquisitionRules = { shouldSkipBlockingWait: true };
const ONLY_EXISTING: AcquisitionRules = { acquireOnlyIfLockAlreadyExists: true };
const CONSISTENT: AcquisitionRules = { acquireReleasedLocksConsistently: true };

const rows: readonly (readonly [string, Sight, AcquisitionRules, Decision])[] = [
  // §5.2: no item.
  ['no item: the new-lock write', { existing: undefined }, {}, { kind: 'write', path: { kind: 'absent' }, existing: undefined }],
  ['no item, acquireOnlyIfLockAlreadyExists: not this time', { existing: undefined }, ONLY_EXISTING, { kind: 'retry', why: 'no-item' }],
  // §5.2: a released item, taken at once.
  [
    'released: taken at once, whoever released it',
    { existing: released },
    {},
    { kind: 'write', path: { kind: 'released', readRecordVersionNumber: undefined }, existing: released },
  ],
  [
    'released, acquireReleasedLocksConsistently: conditioned on the RVN read',
    { existing: released },
    CONSISTENT,
    { kind: 'write', path: { kind: 'released', readRecordVersionNumber: 'rvn-1' }, existing: released },
  ],
  [
    'released, acquireOnlyIfLockAlreadyExists: an item exists, taken as usual',
    { existing: released },
    ONLY_EXISTING,
    { kind: 'write', path: { kind: 'released', readRecordVersionNumber: undefined }, existing: released },
  ],
  // §5.2, §5.4: a held item, watched.
  [
    'held, RVN not yet stood still for its lease: wait',
    { existing: held, watched: { observation: firstSeen, stale: false } },
    {},
    { kind: 'wait' },
  ],
  [
    'held, RVN stood still for its lease: the takeover, decided on the observation that started the watch',
    { existing: held, watched: { observation: firstSeen, stale: true } },
    {},
    { kind: 'write', path: { kind: 'expired', watchedRecordVersionNumber: 'rvn-1' }, existing: firstSeen },
  ],
  [
    'held under our own owner name by another write: waited for like anyone else',
    { existing: observation(900, { ownerName: 'me' }), watched: { observation: firstSeen, stale: false } },
    {},
    { kind: 'wait' },
  ],
  // Our own write whose outcome was unknown, shown by the item.
  ['our write of unknown outcome in the table: ours', { existing: ourItem, ours: ourWrite }, {}, { kind: 'ours', acquisition: ourWrite }],
  ['our write shown while skipping the wait: ours', { existing: ourItem, ours: ourWrite }, SKIP, { kind: 'ours', acquisition: ourWrite }],
  // §5.5: shouldSkipBlockingWait.
  [
    'skip the wait, held, not known stale: unavailable',
    { existing: held, watched: { observation: held, stale: false } },
    SKIP,
    { kind: 'unavailable' },
  ],
  [
    'skip the wait, held, its RVN seen a lease ago by an earlier call: the takeover',
    { existing: held, watched: { observation: held, stale: true } },
    SKIP,
    { kind: 'write', path: { kind: 'expired', watchedRecordVersionNumber: 'rvn-1' }, existing: held },
  ],
  [
    'skip the wait, released: taken at once',
    { existing: released },
    SKIP,
    { kind: 'write', path: { kind: 'released', readRecordVersionNumber: undefined }, existing: released },
  ],
  [
    'skip the wait, no item: the new-lock write',
    { existing: undefined },
    SKIP,
    { kind: 'write', path: { kind: 'absent' }, existing: undefined },
  ],
  // §9.2 item 1: a refused write's ALL_OLD item is the next observation.
  [
    'the new-lock write refused, its item released: the released path',
    { existing: released, refused: { path: 'absent', recordVersionNumber: undefined } },
    {},
    { kind: 'write', path: { kind: 'released', readRecordVersionNumber: undefined }, existing: released },
  ],
  [
    'the new-lock write refused, its item held: the watch starts',
    { existing: held, refused: { path: 'absent', recordVersionNumber: undefined }, watched: { observation: held, stale: false } },
    {},
    { kind: 'wait' },
  ],
  [
    'a conditioned write refused without an item, then no item again: the new-lock write refused just now is not sent again',
    { existing: undefined, refused: { path: 'absent', recordVersionNumber: undefined } },
    {},
    { kind: 'retry', why: 'refused-again' },
  ],
  [
    'the released write refused on the same released item: not sent again',
    { existing: released, refused: { path: 'released', recordVersionNumber: 'rvn-1' } },
    {},
    { kind: 'retry', why: 'refused-again' },
  ],
  [
    'the released write refused, the item released again since (a new RVN): sent',
    {
      existing: observation(900, { isReleased: true, recordVersionNumber: 'rvn-2' }),
      refused: { path: 'released', recordVersionNumber: 'rvn-1' },
    },
    {},
    {
      kind: 'write',
      path: { kind: 'released', readRecordVersionNumber: undefined },
      existing: observation(900, { isReleased: true, recordVersionNumber: 'rvn-2' }),
    },
  ],
  [
    'the takeover refused on the same stale RVN: not sent again',
    { existing: held, refused: { path: 'expired', recordVersionNumber: 'rvn-1' }, watched: { observation: firstSeen, stale: true } },
    {},
    { kind: 'retry', why: 'refused-again' },
  ],
];

describe('decide', () => {
  it.each(rows)('%s', (_, sight, rules, expected) => {
    expect(decide(sight, rules)).toEqual(expected);
  });
});

describe('heldByAnother', () => {
  const cases: readonly (readonly [string, LockObservation | undefined, boolean])[] = [
    ['no item', undefined, false],
    ['released by another', released, false],
    ['held by another', held, true],
    ['held under our own owner name', ourItem, false],
  ];
  it.each(cases)('%s', (_, existing, expected) => {
    expect(heldByAnother(existing, 'me')).toBe(expected);
  });
});
