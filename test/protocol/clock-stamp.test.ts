/**
 * The bounded-clock stamp on the wire: written beside the RVN by every write
 * of a client with the option, nowhere else, and void once the RVN it names
 * is not the item's.
 */
import { describe, expect, it } from '@jest/globals';
import { InvalidArgumentError } from '../../src/base/errors.js';
import {
  CLOCK_STAMP_ATTRIBUTE,
  buildAcquireRequest,
  buildGroupAcquisition,
  buildHeartbeatRequest,
  buildHeartbeatStatement,
  buildNewLockStatement,
  decodeLockItem,
  encodeLockItem,
  formatClockStamp,
  stampedWriteTime,
  type LockTable,
} from '../../src/protocol/index.js';

const TABLE: LockTable = { tableName: 'locks', partitionKeyName: 'key', sortKeyName: undefined };
const RECORD = {
  partitionKey: 'job-1',
  sortKey: undefined,
  ownerName: 'worker-a',
  leaseDurationMs: 20_000,
  recordVersionNumber: 'rvn-1',
  data: undefined,
  additionalAttributes: {},
};
const HELD = { partitionKey: 'job-1', sortKey: undefined, ownerName: 'worker-a', recordVersionNumber: 'rvn-1' };
const AT = 1_764_000_000_123;

describe('the stamp', () => {
  it('names the RVN and the epoch milliseconds, and reads back only for that RVN', () => {
    expect(formatClockStamp('rvn-1', AT)).toBe('rvn-1 1764000000123');
    expect(stampedWriteTime('rvn-1 1764000000123', 'rvn-1')).toBe(AT);
    // A Java write changed the RVN and left the stamp: void.
    expect(stampedWriteTime('rvn-1 1764000000123', 'rvn-2')).toBeUndefined();
    expect(stampedWriteTime(undefined, 'rvn-1')).toBeUndefined();
  });

  it('is void when it is not a stamp', () => {
    for (const text of ['rvn-1', 'rvn-1 ', 'rvn-1 12.5', 'rvn-1 -5', 'rvn-1 1e12', ' rvn-1 5', 'rvn-1 99999999999999999', '']) {
      expect(stampedWriteTime(text, 'rvn-1')).toBeUndefined();
    }
  });

  it('refuses a time that is not whole epoch milliseconds', () => {
    expect(() => formatClockStamp('rvn-1', 1.5)).toThrow(RangeError);
    expect(() => formatClockStamp('rvn-1', -1)).toThrow(RangeError);
  });
});

describe('reading an item', () => {
  const item = { ...encodeLockItem(TABLE, RECORD), [CLOCK_STAMP_ATTRIBUTE]: { S: formatClockStamp('rvn-1', AT) } };

  it('takes the stamp naming the current RVN as writtenAt, and never as an additional attribute', () => {
    const record = decodeLockItem(TABLE, item);
    expect(record.writtenAt).toBe(AT);
    expect(record.additionalAttributes).toEqual({});
  });

  it('drops a stamp that names another RVN, or that is not a string', () => {
    const heartbeatedByJava = { ...item, recordVersionNumber: { S: 'rvn-2' } };
    expect(decodeLockItem(TABLE, heartbeatedByJava).writtenAt).toBeUndefined();
    expect('writtenAt' in decodeLockItem(TABLE, heartbeatedByJava)).toBe(false);
    const numeric = { ...item, [CLOCK_STAMP_ATTRIBUTE]: { N: String(AT) } };
    expect(decodeLockItem(TABLE, numeric).writtenAt).toBeUndefined();
    expect(decodeLockItem(TABLE, numeric).additionalAttributes).toEqual({});
  });

  it('has no writtenAt field on an item without a stamp', () => {
    expect('writtenAt' in decodeLockItem(TABLE, encodeLockItem(TABLE, RECORD))).toBe(false);
  });
});

describe('writing', () => {
  it('refuses the stamp attribute among additional attributes, with the other reserved names', () => {
    const record = { ...RECORD, additionalAttributes: { [CLOCK_STAMP_ATTRIBUTE]: 'rvn-1 0' } };
    expect(() => encodeLockItem(TABLE, record)).toThrow(InvalidArgumentError);
    expect(() => encodeLockItem(TABLE, record)).toThrow(/reserved/);
  });

  it('acquisitions carry the stamp only when given a time: PutItem, UpdateItem, PartiQL INSERT and transactions', () => {
    const put = buildAcquireRequest(TABLE, RECORD, { kind: 'absent' });
    expect(put.operation === 'PutItem' && put.input.Item?.[CLOCK_STAMP_ATTRIBUTE]).toBeUndefined();
    const stamped = buildAcquireRequest(TABLE, RECORD, { kind: 'absent' }, { writtenAt: AT });
    expect(stamped.operation === 'PutItem' && stamped.input.Item?.[CLOCK_STAMP_ATTRIBUTE]).toEqual({ S: 'rvn-1 1764000000123' });
    if (stamped.operation !== 'PutItem') throw new Error('expected a PutItem');
    const insert = buildNewLockStatement(TABLE, stamped.input.Item ?? {});
    expect(insert.Statement).toContain(`'${CLOCK_STAMP_ATTRIBUTE}': ?`);

    const update = buildAcquireRequest(
      TABLE,
      RECORD,
      { kind: 'expired', watchedRecordVersionNumber: 'rvn-0' },
      { updateExistingLockRecord: true, writtenAt: AT },
    );
    if (update.operation !== 'UpdateItem') throw new Error('expected an UpdateItem');
    const names = Object.entries(update.input.ExpressionAttributeNames ?? {});
    const [placeholder] = names.find(([, name]) => name === CLOCK_STAMP_ATTRIBUTE) ?? [''];
    expect(update.input.ExpressionAttributeValues?.[placeholder.replace('#k', ':v')]).toEqual({ S: 'rvn-1 1764000000123' });

    const group = buildGroupAcquisition(TABLE, [{ record: RECORD, path: { kind: 'absent' } }], undefined, AT);
    expect(group.items[0]?.Put?.Item?.[CLOCK_STAMP_ATTRIBUTE]).toEqual({ S: 'rvn-1 1764000000123' });
    expect(
      buildGroupAcquisition(TABLE, [{ record: RECORD, path: { kind: 'absent' } }]).items[0]?.Put?.Item?.[CLOCK_STAMP_ATTRIBUTE],
    ).toBeUndefined();
  });

  it('heartbeats stamp the new RVN in their SET list, also when they delete or replace data', () => {
    const base = { newRecordVersionNumber: 'rvn-2', leaseDurationMs: 20_000, writtenAt: AT };
    const plain = buildHeartbeatRequest(TABLE, HELD, base);
    if (plain.operation !== 'UpdateItem') throw new Error('expected an UpdateItem');
    expect(plain.input.UpdateExpression).toBe('SET #ld = :ld, #rvn = :newRvn, #wa = :wa');
    expect(plain.input.ExpressionAttributeNames?.['#wa']).toBe(CLOCK_STAMP_ATTRIBUTE);
    expect(plain.input.ExpressionAttributeValues?.[':wa']).toEqual({ S: 'rvn-2 1764000000123' });
    const deleting = buildHeartbeatRequest(TABLE, HELD, { ...base, deleteData: true });
    expect(deleting.operation === 'UpdateItem' && deleting.input.UpdateExpression).toBe('SET #ld = :ld, #rvn = :newRvn, #wa = :wa REMOVE #d');
    const replacing = buildHeartbeatRequest(TABLE, HELD, { ...base, data: new Uint8Array([1]) });
    expect(replacing.operation === 'UpdateItem' && replacing.input.UpdateExpression).toBe('SET #ld = :ld, #rvn = :newRvn, #d = :d, #wa = :wa');
    const unstamped = buildHeartbeatRequest(TABLE, HELD, { ...base, writtenAt: undefined });
    expect(unstamped.operation === 'UpdateItem' && unstamped.input.ExpressionAttributeNames?.['#wa']).toBe(undefined);
  });

  it('the batched heartbeat sets the stamp as a parameter after the new RVN', () => {
    const statement = buildHeartbeatStatement(TABLE, HELD, { newRecordVersionNumber: 'rvn-2', leaseDurationMs: 20_000, writtenAt: AT });
    expect(statement.Statement).toBe(
      `UPDATE "locks" SET "leaseDuration" = ? SET "recordVersionNumber" = ? SET "${CLOCK_STAMP_ATTRIBUTE}" = ? WHERE "key" = ? AND "recordVersionNumber" = ? AND "ownerName" = ?`,
    );
    expect(statement.Parameters).toEqual([
      { S: '20000' },
      { S: 'rvn-2' },
      { S: 'rvn-2 1764000000123' },
      { S: 'job-1' },
      { S: 'rvn-1' },
      { S: 'worker-a' },
    ]);
  });
});
