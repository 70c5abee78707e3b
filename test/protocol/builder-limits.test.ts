/**
 * Arguments DynamoDB or a Java peer would refuse are refused by the builders
 * first, with an InvalidArgumentError and the right `code`.
 */
import type { LockKey } from '../../src/base/lock-key.js';
import { describe, expect, it } from '@jest/globals';
import { InvalidArgumentError, type InvalidArgumentCode } from '../../src/base/errors.js';
import {
  buildAcquireRequest,
  buildGetLockRequest,
  buildHeartbeatRequest,
  buildQueryRequest,
  buildReleaseRequest,
  encodeLockItem,
  formatLeaseDuration,
  itemSizeBytes,
  MAX_ITEM_BYTES,
  MAX_PARTITION_KEY_BYTES,
  MAX_SORT_KEY_BYTES,
  type LockRecordToWrite,
  type LockTable,
} from '../../src/protocol/index.js';

function thrownBy(build: () => unknown): unknown {
  try {
    build();
  } catch (error) {
    return error;
  }
  return undefined;
}

function expectInvalidArgument(build: () => unknown, code: InvalidArgumentCode): void {
  const error = thrownBy(build);
  expect(error).toBeInstanceOf(InvalidArgumentError);
  expect((error as InvalidArgumentError).code).toBe(code);
}

const hashOnly: LockTable = { tableName: 'locks', partitionKeyName: 'key' };
const withSortKey: LockTable = { tableName: 'locks', partitionKeyName: 'key', sortKeyName: 'sortKey' };

const RVN = 'f47ac10b-58cc-4372-a567-0e02b2c3d479';

function record(key: LockKey, extra: Partial<LockRecordToWrite> = {}): LockRecordToWrite {
  return {
    ...key,
    ownerName: 'owner-A',
    leaseDurationMs: 20000,
    recordVersionNumber: RVN,
    data: undefined,
    additionalAttributes: {},
    ...extra,
  };
}

/** Every builder that takes a lock key, called for one table and key. */
const keyedBuilders: [string, (table: LockTable, key: LockKey) => unknown][] = [
  ['GetItem', (table, key) => buildGetLockRequest(table, key)],
  ['acquire PutItem', (table, key) => buildAcquireRequest(table, record(key), { kind: 'absent' })],
  [
    'acquire UpdateItem',
    (table, key) =>
      buildAcquireRequest(table, record(key), { kind: 'expired', watchedRecordVersionNumber: RVN }, { updateExistingLockRecord: true }),
  ],
  [
    'heartbeat',
    (table, key) =>
      buildHeartbeatRequest(
        table,
        { ...key, ownerName: 'owner-A', recordVersionNumber: RVN },
        { newRecordVersionNumber: RVN, leaseDurationMs: 20000 },
      ),
  ],
  [
    'release (delete)',
    (table, key) => buildReleaseRequest(table, { ...key, ownerName: 'owner-A', recordVersionNumber: RVN }, { deleteLock: true }),
  ],
  [
    'release (mark)',
    (table, key) => buildReleaseRequest(table, { ...key, ownerName: 'owner-A', recordVersionNumber: RVN }, { deleteLock: false }),
  ],
];

/** Strings of exactly `bytes` UTF-8 bytes, made of 2-byte characters. */
const twoByteString = (bytes: number): string => 'é'.repeat(bytes / 2);

describe.each(keyedBuilders)('%s', (_name, build) => {
  it.each([
    ['a sort key on a hash-only table', 'SORT_KEY_NOT_ALLOWED', hashOnly, { partitionKey: 'lock-1', sortKey: 'shard-7' }],
    ['an empty sort key on a hash-only table', 'SORT_KEY_NOT_ALLOWED', hashOnly, { partitionKey: 'lock-1', sortKey: '' }],
    ['no sort key on a sort-key table', 'SORT_KEY_REQUIRED', withSortKey, { partitionKey: 'lock-1' }],
    ['an empty partition key', 'EMPTY_KEY', hashOnly, { partitionKey: '' }],
    ['an empty partition key (sort-key table)', 'EMPTY_KEY', withSortKey, { partitionKey: '', sortKey: 'shard-7' }],
    ['an empty sort key', 'EMPTY_KEY', withSortKey, { partitionKey: 'lock-1', sortKey: '' }],
    [
      `a partition key of ${MAX_PARTITION_KEY_BYTES + 2} UTF-8 bytes`,
      'KEY_TOO_LONG',
      hashOnly,
      { partitionKey: twoByteString(MAX_PARTITION_KEY_BYTES + 2) },
    ],
    [
      `a partition key of ${MAX_PARTITION_KEY_BYTES + 1} ASCII bytes`,
      'KEY_TOO_LONG',
      hashOnly,
      { partitionKey: 'k'.repeat(MAX_PARTITION_KEY_BYTES + 1) },
    ],
    [
      `a sort key of ${MAX_SORT_KEY_BYTES + 2} UTF-8 bytes`,
      'KEY_TOO_LONG',
      withSortKey,
      { partitionKey: 'lock-1', sortKey: twoByteString(MAX_SORT_KEY_BYTES + 2) },
    ],
    // "x\ud800" and "x\ud801" would both be stored as "x\ufffd": one item for two locks.
    ['a partition key with a lone high surrogate', 'MALFORMED_KEY', hashOnly, { partitionKey: 'x\ud800' }],
    ['a partition key with a lone low surrogate', 'MALFORMED_KEY', hashOnly, { partitionKey: '\udc00x' }],
    ['a sort key with a lone surrogate', 'MALFORMED_KEY', withSortKey, { partitionKey: 'lock-1', sortKey: 'x\ud801' }],
  ] as [string, InvalidArgumentCode, LockTable, LockKey][])('refuses %s with %s', (_title, code, table, key) => {
    expectInvalidArgument(() => build(table, key), code);
  });

  it('accepts keys with surrogate pairs (characters outside the BMP)', () => {
    expect(build(withSortKey, { partitionKey: 'lock-\ud83d\udd12', sortKey: '\ud834\udd1e' })).toBeDefined();
  });

  it('accepts keys at the size limits', () => {
    expect(build(hashOnly, { partitionKey: twoByteString(MAX_PARTITION_KEY_BYTES) })).toBeDefined();
    expect(
      build(withSortKey, { partitionKey: twoByteString(MAX_PARTITION_KEY_BYTES), sortKey: twoByteString(MAX_SORT_KEY_BYTES) }),
    ).toBeDefined();
  });
});

describe('Query', () => {
  it('refuses an empty or too long partition key', () => {
    expectInvalidArgument(() => buildQueryRequest(withSortKey, ''), 'EMPTY_KEY');
    expectInvalidArgument(() => buildQueryRequest(withSortKey, 'k'.repeat(MAX_PARTITION_KEY_BYTES + 1)), 'KEY_TOO_LONG');
  });
});

describe('item size', () => {
  const key = { partitionKey: 'lock-1' };
  // Bytes the item takes besides the data bytes themselves.
  const overhead = itemSizeBytes(encodeLockItem(hashOnly, record(key, { data: new Uint8Array(0) })));
  const largestData = MAX_ITEM_BYTES - overhead;

  it('counts UTF-8 attribute names and values', () => {
    const item = encodeLockItem(hashOnly, record(key, { data: new Uint8Array(10) }));
    const expected = Object.entries({ key: 'lock-1', ownerName: 'owner-A', leaseDuration: '20000', recordVersionNumber: RVN }).reduce(
      (sum, [name, value]) => sum + name.length + value.length,
      'data'.length + 10,
    );
    expect(itemSizeBytes(item)).toBe(expected);
  });

  it.each([
    ['PutItem', false],
    ['UpdateItem', true],
  ])(`%s: data up to ${MAX_ITEM_BYTES} bytes of item is accepted, one byte more gives ITEM_TOO_LARGE`, (_op, updateExistingLockRecord) => {
    const acquire = (size: number) => () =>
      buildAcquireRequest(hashOnly, record(key, { data: new Uint8Array(size) }), { kind: 'absent' }, { updateExistingLockRecord });
    expect(acquire(largestData)()).toBeDefined();
    expectInvalidArgument(acquire(largestData + 1), 'ITEM_TOO_LARGE');
  });

  it.each([
    ['0.12345678901234567', 10],
    ['123.456', 4],
    ['-1.5E+10', 2],
    ['1000', 2],
    ['0.00100', 2],
    ['0', 2],
  ])('counts the number %s as DynamoDB does (a byte per two significant digits, plus one): %i bytes', (number, bytes) => {
    expect(itemSizeBytes({ n: { N: number } })).toBe('n'.length + bytes);
  });

  it('counts fractional numbers at their size: 40 000 of them (about 440 KB) give ITEM_TOO_LARGE', () => {
    const readings = Array.from({ length: 40_000 }, (_, i) => 1 / (i + 3));
    const big = record(key, { additionalAttributes: { readings } });
    expectInvalidArgument(() => buildAcquireRequest(hashOnly, big, { kind: 'absent' }), 'ITEM_TOO_LARGE');
  });

  it('counts additional attributes too', () => {
    const big = record(key, { additionalAttributes: { note: 'x'.repeat(MAX_ITEM_BYTES) } });
    expectInvalidArgument(() => buildAcquireRequest(hashOnly, big, { kind: 'absent' }), 'ITEM_TOO_LARGE');
  });
});

describe('formatLeaseDuration', () => {
  it.each([
    [0, '0'],
    [1, '1'],
    [20000, '20000'],
    [Number.MAX_SAFE_INTEGER, '9007199254740991'],
  ])('writes %d as %j', (ms, text) => {
    expect(formatLeaseDuration(ms)).toBe(text);
  });

  it.each([0.5, 12.5, -1, -20000, Number.NaN, Number.POSITIVE_INFINITY, Number.NEGATIVE_INFINITY, 1e21, Number.MAX_SAFE_INTEGER + 1])(
    'refuses %d with INVALID_DURATION',
    (ms) => {
      expectInvalidArgument(() => formatLeaseDuration(ms), 'INVALID_DURATION');
    },
  );

  it('is what the item and the heartbeat use', () => {
    expectInvalidArgument(() => encodeLockItem(hashOnly, record({ partitionKey: 'lock-1' }, { leaseDurationMs: 1e21 })), 'INVALID_DURATION');
    expectInvalidArgument(
      () =>
        buildHeartbeatRequest(
          hashOnly,
          { partitionKey: 'lock-1', ownerName: 'owner-A', recordVersionNumber: RVN },
          { newRecordVersionNumber: RVN, leaseDurationMs: 2.5 },
        ),
      'INVALID_DURATION',
    );
  });
});
