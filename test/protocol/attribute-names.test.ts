/**
 * Additional attribute names that are valid in DynamoDB but refused when
 * writing since the AWS SDK's marshall could not carry them (`__proto__`,
 * `constructor`), with the attribute's path; kept when another client wrote one.
 * Other names of Object.prototype's members are ordinary names.
 */
import { describe, expect, it } from '@jest/globals';
import { InvalidArgumentError } from '../../src/base/errors.js';
import { decodeLockItem, encodeLockItem, type LockItem, type LockRecordToWrite, type LockTable } from '../../src/protocol/index.js';

const table: LockTable = { tableName: 'locks', partitionKeyName: 'key', sortKeyName: undefined };

function record(additionalAttributes: Record<string, unknown>): LockRecordToWrite {
  return {
    partitionKey: 'job',
    sortKey: undefined,
    ownerName: 'me',
    leaseDurationMs: 20_000,
    recordVersionNumber: 'rvn-1',
    data: undefined,
    additionalAttributes,
  };
}

function refusal(attributes: Record<string, unknown>): { code: string; message: string } | undefined {
  try {
    encodeLockItem(table, record(attributes));
  } catch (error) {
    expect(error).toBeInstanceOf(InvalidArgumentError);
    return { code: (error as InvalidArgumentError).code, message: (error as Error).message };
  }
  return undefined;
}

describe('names refused when writing', () => {
  it.each([
    ['an own __proto__ attribute (the SDK would drop it silently)', '{"__proto__": "x"}', '"__proto__"'],
    ['a constructor attribute', '{"constructor": "x"}', '"constructor"'],
    ['a __proto__ key inside a map inside a list', '{"tags": [{"a": 1}, {"__proto__": 1}]}', '"tags[1].__proto__"'],
    ['a constructor key inside a map', '{"meta": {"constructor": {"name": "x"}}}', '"meta.constructor"'],
  ])('are refused with INVALID_ATTRIBUTE_VALUE, naming the path: %s', (_, json, path) => {
    const refused = refusal(JSON.parse(json) as Record<string, unknown>);
    expect(refused?.code).toBe('INVALID_ATTRIBUTE_VALUE');
    expect(refused?.message).toContain(`Additional attribute ${path}`);
  });

  it('other names of Object.prototype members are stored and read back like any name', () => {
    const attributes = { toString: 'a', hasOwnProperty: 2, valueOf: { isPrototypeOf: true } };
    const item = encodeLockItem(table, record(attributes));
    expect(item['toString']).toEqual({ S: 'a' });
    expect(decodeLockItem(table, item).additionalAttributes).toEqual(attributes);
  });

  it('an item another client wrote with a __proto__ attribute reads back with it, as an own attribute', () => {
    const written = encodeLockItem(table, record({ kept: 'yes' }));
    const item = JSON.parse(JSON.stringify({ ...written, ['__proto__']: { M: { region: { S: 'eu' } } } })) as LockItem;
    expect(Object.hasOwn(item, '__proto__')).toBe(true);
    const { additionalAttributes } = decodeLockItem(table, item);
    expect(Object.keys(additionalAttributes).sort()).toEqual(['__proto__', 'kept']);
    expect(Object.getOwnPropertyDescriptor(additionalAttributes, '__proto__')?.value).toEqual({ region: 'eu' });
    expect(Object.getPrototypeOf(additionalAttributes)).toBe(Object.prototype);
  });
});
