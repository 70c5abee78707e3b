/**
 * The hand-off handle (protocol/hand-off.ts): what `handOff()` writes,
 * what `adoptLock()` accepts (every field checked, each refusal a typed
 * error with a code), and the adopting write built from it.
 */
import { describe, expect, it } from '@jest/globals';
import { LockHandOffError } from '../../src/base/errors.js';
import {
  buildAdoptionRequest,
  checkHandOffTable,
  handOffHandle,
  parseLockHandOff,
  stillHandedOff,
  type LockHandOff,
  type LockTable,
} from '../../src/protocol/index.js';

const table: LockTable = { tableName: 'locks', partitionKeyName: 'key' };
const sortTable: LockTable = { tableName: 'locks', partitionKeyName: 'pk', sortKeyName: 'sk' };
const lock = {
  partitionKey: 'job',
  sortKey: undefined,
  ownerName: 'first',
  recordVersionNumber: 'rvn-1',
  uncertainRecordVersionNumbers: undefined,
  leaseDurationMs: 20_000,
  deleteLockOnRelease: true,
  fencingToken: undefined,
};
const handle: LockHandOff = handOffHandle(table, lock);

/** The code of the error `parse` throws for `input`. */
function refusal(input: unknown): string {
  try {
    parseLockHandOff(input);
  } catch (error) {
    expect(error).toBeInstanceOf(LockHandOffError);
    return (error as LockHandOffError).code;
  }
  throw new Error(`accepted: ${JSON.stringify(input)}`);
}

describe('handOffHandle', () => {
  it('is plain JSON with the format, its version, the table, the key, the owner, the RVN and the lease', () => {
    expect(handle).toEqual({
      format: 'dynamodb-lock/hand-off',
      version: 1,
      tableName: 'locks',
      partitionKeyName: 'key',
      partitionKey: 'job',
      ownerName: 'first',
      recordVersionNumber: 'rvn-1',
      leaseDuration: 20_000,
      deleteLockOnRelease: true,
    });
    expect(JSON.parse(JSON.stringify(handle))).toEqual(handle);
  });

  it('carries the sort key, the RVNs in doubt and the fencing token when there are any', () => {
    const full = handOffHandle(sortTable, { ...lock, sortKey: 'eu', uncertainRecordVersionNumbers: ['rvn-2', 'rvn-3'], fencingToken: 42n });
    expect(full).toMatchObject({ sortKeyName: 'sk', sortKey: 'eu', uncertainRecordVersionNumbers: ['rvn-2', 'rvn-3'], fencingToken: '42' });
    expect(parseLockHandOff(JSON.stringify(full))).toEqual(full);
  });
});

describe('parseLockHandOff', () => {
  it('reads the handle and its JSON text alike', () => {
    expect(parseLockHandOff(handle)).toEqual(handle);
    expect(parseLockHandOff(JSON.stringify(handle))).toEqual(handle);
  });

  it('refuses text that is not JSON, and JSON that is not an object', () => {
    expect(refusal('{"format": ')).toBe('MALFORMED_HANDLE');
    for (const input of [undefined, null, 42, '42', '[]', [], 'null']) expect(refusal(input)).toBe('MALFORMED_HANDLE');
  });

  it('refuses another format, and another version of this one', () => {
    expect(refusal({ ...handle, format: 'something-else' })).toBe('MALFORMED_HANDLE');
    expect(refusal({ ...handle, format: undefined })).toBe('MALFORMED_HANDLE');
    expect(refusal({ ...handle, version: 2 })).toBe('UNSUPPORTED_VERSION');
    expect(refusal({ ...handle, version: '1' })).toBe('UNSUPPORTED_VERSION');
    expect(refusal({ ...handle, version: undefined })).toBe('UNSUPPORTED_VERSION');
  });

  it.each(['tableName', 'partitionKeyName', 'partitionKey', 'ownerName', 'recordVersionNumber', 'leaseDuration', 'deleteLockOnRelease'])(
    'refuses a handle without %s, or with it empty or of another type',
    (field) => {
      const without: Record<string, unknown> = { ...handle };
      delete without[field];
      expect(refusal(without)).toBe('MALFORMED_HANDLE');
      expect(refusal({ ...handle, [field]: '' })).toBe('MALFORMED_HANDLE');
      expect(refusal({ ...handle, [field]: {} })).toBe('MALFORMED_HANDLE');
    },
  );

  it('refuses bad optional fields, a lease that is no whole positive number, and a fencing token that is no number', () => {
    expect(refusal({ ...handle, sortKey: 7 })).toBe('MALFORMED_HANDLE');
    expect(refusal({ ...handle, uncertainRecordVersionNumbers: 'rvn-2' })).toBe('MALFORMED_HANDLE');
    expect(refusal({ ...handle, uncertainRecordVersionNumbers: ['rvn-2', ''] })).toBe('MALFORMED_HANDLE');
    for (const leaseDuration of [0, -1, 1.5, Number.NaN, '20000']) expect(refusal({ ...handle, leaseDuration })).toBe('MALFORMED_HANDLE');
    expect(refusal({ ...handle, fencingToken: '-3' })).toBe('MALFORMED_HANDLE');
    expect(refusal({ ...handle, fencingToken: 3 })).toBe('MALFORMED_HANDLE');
  });

  it('says what is wrong', () => {
    expect(() => parseLockHandOff({ ...handle, ownerName: 5 })).toThrow(/ownerName must be a non-empty string/);
    expect(() => parseLockHandOff({ ...handle, version: 9 })).toThrow(/version 9 is not 1/);
  });
});

describe('checkHandOffTable', () => {
  it('accepts the table of the handle and refuses another table or other key names', () => {
    expect(() => checkHandOffTable(handle, table)).not.toThrow();
    expect(() => checkHandOffTable(handle, { ...table, tableName: 'other' })).toThrow(expect.objectContaining({ code: 'OTHER_TABLE' }));
    expect(() => checkHandOffTable(handle, { ...table, partitionKeyName: 'id' })).toThrow(expect.objectContaining({ code: 'OTHER_TABLE' }));
    expect(() => checkHandOffTable(handle, { ...table, sortKeyName: 'sk' })).toThrow(expect.objectContaining({ code: 'OTHER_TABLE' }));
  });
});

describe('buildAdoptionRequest', () => {
  const adopter = { ownerName: 'second', newRecordVersionNumber: 'rvn-new', leaseDurationMs: 10_000 };

  it("conditions on the handle's owner name and RVN (the holder's C10 with no released mark) and writes the adopter's owner, RVN and lease", () => {
    expect(buildAdoptionRequest(table, handle, adopter)).toEqual({
      TableName: 'locks',
      Key: { key: { S: 'job' } },
      ConditionExpression: 'attribute_exists(#pk) AND #rvn = :rvn AND #on = :on AND attribute_not_exists(#ir)',
      UpdateExpression: 'SET #ld = :ld, #rvn = :newRvn, #on = :newOn',
      ExpressionAttributeNames: { '#pk': 'key', '#on': 'ownerName', '#rvn': 'recordVersionNumber', '#ir': 'isReleased', '#ld': 'leaseDuration' },
      ExpressionAttributeValues: {
        ':rvn': { S: 'rvn-1' },
        ':on': { S: 'first' },
        ':ld': { S: '10000' },
        ':newRvn': { S: 'rvn-new' },
        ':newOn': { S: 'second' },
      },
      ReturnValues: 'ALL_NEW',
      ReturnValuesOnConditionCheckFailure: 'ALL_OLD',
    });
  });

  it('accepts any RVN the handle names as in doubt, and the sort key', () => {
    const inDoubt = handOffHandle(sortTable, { ...lock, sortKey: 'eu', uncertainRecordVersionNumbers: ['rvn-2'] });
    const request = buildAdoptionRequest(sortTable, inDoubt, adopter);
    expect(request.ConditionExpression).toBe(
      'attribute_exists(#pk) AND attribute_exists(#sk) AND (#rvn = :rvn OR #rvn = :uncertainRvn0) AND #on = :on AND attribute_not_exists(#ir)',
    );
    expect(request.ExpressionAttributeValues?.[':uncertainRvn0']).toEqual({ S: 'rvn-2' });
    expect(request.Key).toEqual({ pk: { S: 'job' }, sk: { S: 'eu' } });
  });
});

describe('stillHandedOff', () => {
  const item = (fields: Record<string, string>) => Object.fromEntries(Object.entries(fields).map(([name, value]) => [name, { S: value }]));

  it('is true only for the handle owner with one of its RVNs, not released', () => {
    const inDoubt = { ...handle, uncertainRecordVersionNumbers: ['rvn-2'] };
    expect(stillHandedOff(inDoubt, item({ key: 'job', ownerName: 'first', recordVersionNumber: 'rvn-1' }))).toBe(true);
    expect(stillHandedOff(inDoubt, item({ key: 'job', ownerName: 'first', recordVersionNumber: 'rvn-2' }))).toBe(true);
    expect(stillHandedOff(inDoubt, item({ key: 'job', ownerName: 'first', recordVersionNumber: 'rvn-9' }))).toBe(false);
    expect(stillHandedOff(inDoubt, item({ key: 'job', ownerName: 'other', recordVersionNumber: 'rvn-1' }))).toBe(false);
    expect(stillHandedOff(inDoubt, item({ key: 'job', ownerName: 'first', recordVersionNumber: 'rvn-1', isReleased: '1' }))).toBe(false);
    expect(stillHandedOff(inDoubt, undefined)).toBe(false);
  });
});
