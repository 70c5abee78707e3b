/** The new-lock write as a PartiQL INSERT: the very item the new-lock PutItem (C1/C2) writes. */
import { describe, expect, it } from '@jest/globals';
import { buildAcquireRequest, buildNewLockStatement, type LockRecordToWrite, type LockTable } from '../../src/protocol/index.js';

const TABLE: LockTable = { tableName: 'locks', partitionKeyName: 'key' };

const record = (fields: Partial<LockRecordToWrite> = {}): LockRecordToWrite => ({
  partitionKey: 'orders',
  ownerName: 'worker-1',
  leaseDurationMs: 20_000,
  recordVersionNumber: 'f47ac10b-58cc-4372-a567-0e02b2c3d479',
  data: undefined,
  additionalAttributes: {},
  ...fields,
});

/** The item the new-lock PutItem writes. */
function putItemOf(table: LockTable, written: LockRecordToWrite) {
  const request = buildAcquireRequest(table, written, { kind: 'absent' });
  if (request.operation !== 'PutItem') throw new Error(`expected a PutItem, got ${request.operation}`);
  return request.input.Item ?? {};
}

describe('buildNewLockStatement', () => {
  it("inserts each attribute of the PutItem's item as a parameter, in order", () => {
    const item = putItemOf(TABLE, record());
    const statement = buildNewLockStatement(TABLE, item);
    expect(statement.Statement).toBe(`INSERT INTO "locks" VALUE {'key': ?, 'ownerName': ?, 'leaseDuration': ?, 'recordVersionNumber': ?}`);
    expect(statement.Parameters).toEqual([{ S: 'orders' }, { S: 'worker-1' }, { S: '20000' }, { S: 'f47ac10b-58cc-4372-a567-0e02b2c3d479' }]);
    expect(statement.ReturnValuesOnConditionCheckFailure).toBeUndefined();
  });

  it('carries the sort key, data and additional attributes as the PutItem does', () => {
    const table: LockTable = { ...TABLE, sortKeyName: 'part' };
    const item = putItemOf(table, record({ sortKey: 'p-1', data: new Uint8Array([1, 2]), additionalAttributes: { region: 'eu', tries: 3 } }));
    const statement = buildNewLockStatement(table, item);
    const names = [...(statement.Statement ?? '').matchAll(/'([^']*)': \?/g)].map((match) => match[1]);
    expect(Object.fromEntries(names.map((name, i) => [name, statement.Parameters?.[i]]))).toEqual(item);
  });

  it('doubles a single quote in an attribute name, as PartiQL string literals need', () => {
    const statement = buildNewLockStatement(TABLE, putItemOf(TABLE, record({ additionalAttributes: { "it's": 'x' } })));
    expect(statement.Statement).toContain(`'it''s': ?`);
  });
});
