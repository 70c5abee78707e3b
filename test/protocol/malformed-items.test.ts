/**
 * Items Java would crash on (PROTOCOL.md §2.5) are refused with a
 * MalformedLockItemError naming the attribute, and nothing else;
 * `isReleased` of any type or value means released.
 */
import type { AttributeValue } from '@aws-sdk/client-dynamodb';
import { describe, expect, it } from '@jest/globals';
import { isMalformedLockItemError, MalformedLockItemError } from '../../src/base/errors.js';
import { decodeLockItem, type KeySchemaNames, type LockItem } from '../../src/protocol/index.js';
import { fromWireItem, utf8Bytes, type WireItem } from '../../test-kit/dynamodb-json.js';
import { loadJavaScenarios } from '../../test-kit/java-fixtures.js';

/** A well-formed item the Java client wrote: the first PutItem with data on a hash-only table. */
function javaWrittenItem(sortKey: boolean): { schema: KeySchemaNames; item: LockItem } {
  for (const scenario of loadJavaScenarios()) {
    if ((scenario.table.sortKey !== null) !== sortKey) continue;
    for (const request of scenario.requests) {
      const item = request.request['Item'] as WireItem | undefined;
      if (request.operation === 'PutItem' && item?.['data'] !== undefined) {
        const schema = { partitionKeyName: scenario.table.partitionKey, sortKeyName: scenario.table.sortKey ?? undefined };
        return { schema, item: fromWireItem(item) };
      }
    }
  }
  throw new Error(`No recorded PutItem with data on a ${sortKey ? 'sort-key' : 'hash-only'} table`);
}

const hashOnly = javaWrittenItem(false);
const withSortKey = javaWrittenItem(true);

function without(item: LockItem, name: string): LockItem {
  const copy = { ...item };
  delete copy[name];
  return copy;
}

function decodeError(schema: KeySchemaNames, item: LockItem): unknown {
  try {
    decodeLockItem(schema, item);
  } catch (error) {
    return error;
  }
  throw new Error(`decodeLockItem accepted ${JSON.stringify(item)}`);
}

it('starts from items that decode', () => {
  expect(decodeLockItem(hashOnly.schema, hashOnly.item).data).toBeInstanceOf(Uint8Array);
  expect(decodeLockItem(withSortKey.schema, withSortKey.item).sortKey).toBeDefined();
});

interface Malformation {
  readonly title: string;
  readonly attribute: string;
  readonly change: (item: LockItem) => LockItem;
}

const set =
  (name: string, value: AttributeValue) =>
  (item: LockItem): LockItem => ({ ...item, [name]: value });
const remove =
  (name: string) =>
  (item: LockItem): LockItem =>
    without(item, name);

const malformations: Malformation[] = [
  { title: 'ownerName missing', attribute: 'ownerName', change: remove('ownerName') },
  { title: 'ownerName as N', attribute: 'ownerName', change: set('ownerName', { N: '1' }) },
  { title: 'ownerName as B', attribute: 'ownerName', change: set('ownerName', { B: utf8Bytes('owner-A') }) },
  { title: 'ownerName as an empty value', attribute: 'ownerName', change: set('ownerName', {} as AttributeValue) },
  { title: 'leaseDuration missing', attribute: 'leaseDuration', change: remove('leaseDuration') },
  { title: 'leaseDuration as N', attribute: 'leaseDuration', change: set('leaseDuration', { N: '20000' }) },
  { title: 'leaseDuration "12.5"', attribute: 'leaseDuration', change: set('leaseDuration', { S: '12.5' }) },
  { title: 'leaseDuration ""', attribute: 'leaseDuration', change: set('leaseDuration', { S: '' }) },
  { title: 'leaseDuration "abc"', attribute: 'leaseDuration', change: set('leaseDuration', { S: 'abc' }) },
  { title: 'leaseDuration "2e3"', attribute: 'leaseDuration', change: set('leaseDuration', { S: '2e3' }) },
  { title: 'leaseDuration " 2000"', attribute: 'leaseDuration', change: set('leaseDuration', { S: ' 2000' }) },
  { title: 'leaseDuration "0x10"', attribute: 'leaseDuration', change: set('leaseDuration', { S: '0x10' }) },
  { title: 'leaseDuration "+"', attribute: 'leaseDuration', change: set('leaseDuration', { S: '+' }) },
  { title: 'leaseDuration 2^63', attribute: 'leaseDuration', change: set('leaseDuration', { S: '9223372036854775808' }) },
  { title: 'leaseDuration -2^63-1', attribute: 'leaseDuration', change: set('leaseDuration', { S: '-9223372036854775809' }) },
  { title: 'recordVersionNumber missing', attribute: 'recordVersionNumber', change: remove('recordVersionNumber') },
  { title: 'recordVersionNumber as N', attribute: 'recordVersionNumber', change: set('recordVersionNumber', { N: '7' }) },
  { title: 'data as S', attribute: 'data', change: set('data', { S: 'payload-A' }) },
  { title: 'data as BS', attribute: 'data', change: set('data', { BS: [utf8Bytes('payload-A')] }) },
];

describe.each([
  { table: 'hash-only table', ...hashOnly },
  { table: 'sort-key table', ...withSortKey },
])('$table', ({ schema, item }) => {
  const keyMalformations: Malformation[] = [
    { title: 'partition key missing', attribute: schema.partitionKeyName, change: remove(schema.partitionKeyName) },
    { title: 'partition key as N', attribute: schema.partitionKeyName, change: set(schema.partitionKeyName, { N: '1' }) },
  ];
  if (schema.sortKeyName !== undefined) {
    keyMalformations.push(
      { title: 'sort key missing', attribute: schema.sortKeyName, change: remove(schema.sortKeyName) },
      { title: 'sort key as B', attribute: schema.sortKeyName, change: set(schema.sortKeyName, { B: utf8Bytes('shard-7') }) },
    );
  }

  it.each([...malformations, ...keyMalformations])('$title: MalformedLockItemError naming $attribute', ({ attribute, change }) => {
    const error = decodeError(schema, change(item));
    expect(error).toBeInstanceOf(MalformedLockItemError);
    expect(isMalformedLockItemError(error)).toBe(true);
    expect((error as MalformedLockItemError).attribute).toBe(attribute);
    expect((error as Error).message).toContain(JSON.stringify(attribute));
  });

  it.each([
    ['"1" (what Java writes)', { S: '1' }],
    ['"0"', { S: '0' }],
    ['""', { S: '' }],
    ['BOOL false', { BOOL: false }],
    ['BOOL true', { BOOL: true }],
    ['N 0', { N: '0' }],
    ['NULL', { NULL: true }],
    ['empty B', { B: new Uint8Array() }],
    ['empty L', { L: [] }],
    ['empty M', { M: {} }],
  ] as [string, AttributeValue][])('isReleased %s: released, not an additional attribute', (_title, value) => {
    const record = decodeLockItem(schema, { ...item, isReleased: value });
    expect(record.isReleased).toBe(true);
    expect('isReleased' in record.additionalAttributes).toBe(false);
  });

  it('no isReleased: held', () => {
    expect(decodeLockItem(schema, without(item, 'isReleased')).isReleased).toBe(false);
  });

  it.each([
    ['+2000', 2000],
    ['0020000', 20000],
    ['0', 0],
    ['-1', -1],
    ['9223372036854775807', Number(2n ** 63n - 1n)], // Long.MAX_VALUE, as the nearest double (2^63)
    ['-9223372036854775808', -9223372036854775808],
  ] as [string, number][])('leaseDuration %j is what Long.parseLong reads: %d', (text, ms) => {
    expect(decodeLockItem(schema, { ...item, leaseDuration: { S: text } }).leaseDurationMs).toBe(ms);
  });

  it('keeps unknown attributes of any type as additional attributes, never the key attributes', () => {
    const record = decodeLockItem(schema, {
      ...item,
      label: { S: 'x' },
      count: { N: '3' },
      blob: { B: utf8Bytes('y') },
    });
    expect(record.additionalAttributes).toStrictEqual({ label: 'x', count: 3, blob: utf8Bytes('y') });
  });
});
