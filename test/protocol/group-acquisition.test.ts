/**
 * The group acquisition's transaction: each lock item is exactly the PutItem
 * a single acquisition sends on the same observation, with the same
 * condition; the lock items come first, in the order of the keys; with
 * fencing, each key's counter step follows, in the same order.
 */
import { describe, expect, it } from '@jest/globals';
import { InvalidArgumentError } from '../../src/base/errors.js';
import {
  MAX_TRANSACTION_BYTES,
  buildAcquireRequest,
  buildFencedAcquisition,
  buildGroupAcquisition,
  maxGroupSize,
  validateGroupSize,
  type AcquisitionPath,
  type GroupMember,
  type LockRecordToWrite,
  type LockTable,
} from '../../src/protocol/index.js';

const locks: LockTable = { tableName: 'locks', partitionKeyName: 'key', sortKeyName: 'sk' };
const fencing: LockTable = { ...locks, tableName: 'locks-fencing' };
const record = (sortKey: string): LockRecordToWrite => ({
  partitionKey: 'accounts',
  sortKey,
  ownerName: 'me',
  leaseDurationMs: 20_000,
  recordVersionNumber: `rvn-${sortKey}`,
  data: new TextEncoder().encode('transfer'),
  additionalAttributes: { team: 'payments' },
});
const PATHS: AcquisitionPath[] = [
  { kind: 'absent' },
  { kind: 'released' },
  { kind: 'released', readRecordVersionNumber: 'read-rvn' },
  { kind: 'expired', watchedRecordVersionNumber: 'watched-rvn' },
];
const members: GroupMember[] = PATHS.map((path, i) => ({ record: record(`k${i}`), path }));

describe('buildGroupAcquisition', () => {
  it("puts each lock's single-acquisition PutItem, condition and all, in the order of the keys", () => {
    const { items, tokens } = buildGroupAcquisition(locks, members);
    expect(items).toEqual(
      members.map(({ record: one, path }) => ({
        Put: { ...buildAcquireRequest(locks, one, path).input, ReturnValuesOnConditionCheckFailure: 'ALL_OLD' },
      })),
    );
    expect(items.map((item) => item.Put?.ConditionExpression)).toEqual(
      PATHS.map((path) => buildAcquireRequest(locks, record('x'), path).input.ConditionExpression),
    );
    expect(tokens).toEqual([undefined, undefined, undefined, undefined]);
  });

  it('with fencing, puts every lock item first, then each counter step, from the value read for each key', () => {
    const seen = [undefined, 4n, 0n, 9n];
    const { items, tokens } = buildGroupAcquisition(locks, members, { table: fencing, seen });
    const single = members.map(({ record: one, path }, i) =>
      buildFencedAcquisition(
        fencing,
        { request: buildAcquireRequest(locks, one, path), key: one, ownerName: 'me', recordVersionNumber: one.recordVersionNumber },
        seen[i],
      ),
    );
    expect(items).toEqual([...single.map((one) => one.items[0]), ...single.map((one) => one.items[1])]);
    expect(tokens).toEqual([1n, 5n, 1n, 10n]);
  });

  it('takes as many locks as one transaction has items, half as many with fencing', () => {
    expect([maxGroupSize(false), maxGroupSize(true)]).toEqual([100, 50]);
  });
});

describe('validateGroupSize', () => {
  const item = (bytes: number) => ({ data: { B: new Uint8Array(bytes) } });

  it('accepts items up to the limit of one transaction together, and refuses more', () => {
    expect(() => validateGroupSize([item(MAX_TRANSACTION_BYTES / 2 - 4), item(MAX_TRANSACTION_BYTES / 2 - 4)])).not.toThrow();
    expect(() => validateGroupSize([item(MAX_TRANSACTION_BYTES / 2), item(MAX_TRANSACTION_BYTES / 2)])).toThrow(InvalidArgumentError);
  });
});
