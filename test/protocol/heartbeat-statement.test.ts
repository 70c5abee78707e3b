/**
 * The heartbeat as a PartiQL statement: the same writes and the same
 * condition as the heartbeat UpdateItem (U3 under C10/C9), with every value a
 * parameter.
 */
import { describe, expect, it } from '@jest/globals';
import { InvalidArgumentError } from '../../src/base/errors.js';
import { buildHeartbeatStatement, canBatchHeartbeats, type LockTable } from '../../src/protocol/index.js';

const TABLE: LockTable = { tableName: 'locks', partitionKeyName: 'key', sortKeyName: undefined };
const HELD = { partitionKey: 'job-1', sortKey: undefined, ownerName: 'worker-a', recordVersionNumber: 'rvn-1' };
const CHANGE = { newRecordVersionNumber: 'rvn-2', leaseDurationMs: 20_000, refuseReleased: true };

describe('buildHeartbeatStatement', () => {
  it('sets the lease and a new RVN where key, RVN and owner match and the lock is not released', () => {
    expect(buildHeartbeatStatement(TABLE, HELD, CHANGE)).toEqual({
      Statement:
        'UPDATE "locks" SET "leaseDuration" = ? SET "recordVersionNumber" = ? WHERE "key" = ? AND "recordVersionNumber" = ? AND "ownerName" = ? AND "isReleased" IS MISSING',
      Parameters: [{ S: '20000' }, { S: 'rvn-2' }, { S: 'job-1' }, { S: 'rvn-1' }, { S: 'worker-a' }],
      ReturnValuesOnConditionCheckFailure: 'ALL_OLD',
    });
  });

  it('without refuseReleased, leaves the isReleased attribute out of the condition (as Java)', () => {
    const { Statement } = buildHeartbeatStatement(TABLE, HELD, { ...CHANGE, refuseReleased: false });
    expect(Statement).not.toContain('isReleased');
    expect(Statement).toMatch(/"ownerName" = \?$/);
  });

  it('accepts any RVN whose write may have been applied, in order', () => {
    const held = { ...HELD, uncertainRecordVersionNumbers: ['rvn-x', 'rvn-y'] };
    const { Statement, Parameters } = buildHeartbeatStatement(TABLE, held, CHANGE);
    expect(Statement).toContain('"recordVersionNumber" IN [?, ?, ?] AND "ownerName" = ?');
    expect(Parameters).toEqual([
      { S: '20000' },
      { S: 'rvn-2' },
      { S: 'job-1' },
      { S: 'rvn-1' },
      { S: 'rvn-x' },
      { S: 'rvn-y' },
      { S: 'worker-a' },
    ]);
  });

  it('names the sort key of a table that has one, with its own parameter after the partition key', () => {
    const table: LockTable = { tableName: 'locks', partitionKeyName: 'pk', sortKeyName: 'sk' };
    const { Statement, Parameters } = buildHeartbeatStatement(table, { ...HELD, sortKey: 'part-7' }, CHANGE);
    expect(Statement).toContain('WHERE "pk" = ? AND "sk" = ? AND "recordVersionNumber" = ?');
    expect(Parameters?.slice(2, 4)).toEqual([{ S: 'job-1' }, { S: 'part-7' }]);
  });

  it('keeps every value out of the statement text', () => {
    const held = { ...HELD, partitionKey: `x" OR "ownerName" = 'y`, ownerName: '"; DROP' };
    const { Statement } = buildHeartbeatStatement(TABLE, held, CHANGE);
    expect(Statement).toBe(buildHeartbeatStatement(TABLE, HELD, CHANGE).Statement);
  });

  it('refuses a key that the table cannot hold, with the same typed error as the UpdateItem', () => {
    const table: LockTable = { tableName: 'locks', partitionKeyName: 'pk', sortKeyName: 'sk' };
    expect(() => buildHeartbeatStatement(table, HELD, CHANGE)).toThrow(InvalidArgumentError);
    expect(() => buildHeartbeatStatement(TABLE, { ...HELD, partitionKey: '' }, CHANGE)).toThrow(InvalidArgumentError);
  });
});

describe('canBatchHeartbeats', () => {
  it('is false only for key names that PartiQL could not quote', () => {
    expect(canBatchHeartbeats(TABLE)).toBe(true);
    expect(canBatchHeartbeats({ ...TABLE, sortKeyName: 'sort key.with-dots' })).toBe(true);
    expect(canBatchHeartbeats({ ...TABLE, partitionKeyName: 'the "key"' })).toBe(false);
    expect(canBatchHeartbeats({ ...TABLE, sortKeyName: 'a"b' })).toBe(false);
    expect(() => buildHeartbeatStatement({ ...TABLE, partitionKeyName: 'a"b' }, HELD, CHANGE)).toThrow(InvalidArgumentError);
    expect(() => buildHeartbeatStatement({ ...TABLE, partitionKeyName: 'a"b' }, HELD, CHANGE)).toThrow(/quote/);
  });
});
