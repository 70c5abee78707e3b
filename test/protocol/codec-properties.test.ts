/**
 * Property tests of the item codec (issue 6): any valid lock record survives
 * encode → decode unchanged, and any item with a protocol attribute missing or
 * mistyped is refused with MalformedLockItemError, never another error.
 */
import { describe, expect, it } from '@jest/globals';
import type { AttributeValue } from '@aws-sdk/client-dynamodb';
import fc from 'fast-check';
import { MalformedLockItemError } from '../../src/base/errors.js';
import { decodeLockItem, encodeLockItem, type LockItem, type LockRecordToWrite } from '../../src/protocol/codec.js';
import { reservedAttributeNames } from '../../src/protocol/attributes.js';

const SCHEMAS = [{ partitionKeyName: 'key' }, { partitionKeyName: 'pk', sortKeyName: 'sk' }] as const;

/**
 * `constructor` and `__proto__` are left out: they are refused
 * (test/protocol/attribute-names.test.ts). Other names of Object.prototype's
 * members are generated like any name.
 */
const UNMARSHALLABLE_NAMES = ['constructor', '__proto__'];
const PROTOTYPE_NAMES_TO_MIX_IN = Object.getOwnPropertyNames(Object.prototype).filter((name) => !UNMARSHALLABLE_NAMES.includes(name));

/** Additional attribute values of many DynamoDB types; numbers stay within what round-trips as `number`. */
const attributeValue = fc.letrec((tie) => ({
  value: fc.oneof(
    { depthSize: 'small' },
    fc.string(),
    fc.integer(),
    fc.boolean(),
    fc.constant(null),
    fc.uint8Array({ minLength: 1, maxLength: 16 }),
    fc.array(tie('value'), { maxLength: 3 }),
    fc.dictionary(
      fc
        .oneof(fc.string({ minLength: 1, maxLength: 8 }), fc.constantFrom(...PROTOTYPE_NAMES_TO_MIX_IN))
        .filter((name) => !UNMARSHALLABLE_NAMES.includes(name)),
      tie('value'),
      { maxKeys: 3, noNullPrototype: true },
    ),
  ),
})).value;

function recordFor(schema: (typeof SCHEMAS)[number]) {
  const reserved = reservedAttributeNames(schema);
  return fc.record({
    partitionKey: fc.string({ minLength: 1, maxLength: 64 }),
    sortKey: 'sortKeyName' in schema ? fc.string({ minLength: 1, maxLength: 64 }) : fc.constant(undefined),
    ownerName: fc.string({ maxLength: 64 }),
    leaseDurationMs: fc.integer({ min: 0, max: Number.MAX_SAFE_INTEGER }),
    recordVersionNumber: fc.uuid(),
    data: fc.option(fc.uint8Array({ maxLength: 64 }), { nil: undefined }),
    additionalAttributes: fc.dictionary(
      fc
        .oneof(fc.string({ minLength: 1, maxLength: 12 }), fc.constantFrom(...PROTOTYPE_NAMES_TO_MIX_IN))
        .filter((name) => !reserved.includes(name) && !UNMARSHALLABLE_NAMES.includes(name)),
      attributeValue,
      // Read back with Object.prototype, so objects without one would not compare equal.
      { maxKeys: 5, noNullPrototype: true },
    ),
  }) satisfies fc.Arbitrary<LockRecordToWrite>;
}

/** Replacements that make a protocol attribute wrong: the wrong type, or (for the lease) not a whole number. */
const wrongValue: fc.Arbitrary<AttributeValue | undefined> = fc.oneof(
  fc.constant(undefined),
  fc.integer().map((n): AttributeValue => ({ N: String(n) })),
  fc.boolean().map((b): AttributeValue => ({ BOOL: b })),
  fc.constant<AttributeValue>({ NULL: true }),
  fc.uint8Array({ maxLength: 4 }).map((b): AttributeValue => ({ B: b })),
  fc.constant<AttributeValue>({ L: [] }),
  fc.constant<AttributeValue>({ M: {} }),
);

describe.each(SCHEMAS)('the item codec with key schema %o', (schema) => {
  it('decodes every encoded valid record back to itself', () => {
    fc.assert(
      fc.property(recordFor(schema), (record) => {
        const decoded = decodeLockItem(schema, encodeLockItem(schema, record));
        expect(decoded).toEqual({ ...record, isReleased: false });
      }),
      { numRuns: 300 },
    );
  });

  it('refuses an item with a protocol attribute missing or mistyped with MalformedLockItemError, naming it', () => {
    const protocol = ['ownerName', 'leaseDuration', 'recordVersionNumber', schema.partitionKeyName];
    if ('sortKeyName' in schema) protocol.push(schema.sortKeyName);
    fc.assert(
      fc.property(recordFor(schema), fc.constantFrom(...protocol), wrongValue, (record, attribute, value) => {
        const item: LockItem = { ...encodeLockItem(schema, record) };
        if (value === undefined) delete item[attribute];
        else item[attribute] = value;
        let thrown: unknown;
        try {
          decodeLockItem(schema, item);
        } catch (error) {
          thrown = error;
        }
        expect(thrown).toBeInstanceOf(MalformedLockItemError);
        expect((thrown as MalformedLockItemError).attribute).toBe(attribute);
      }),
      { numRuns: 300 },
    );
  });

  it('refuses a lease that is not a whole number, and data that is not binary', () => {
    const badLease = fc.oneof(
      fc.constantFrom('', '1.5', '1e3', ' 1', '0x10', 'NaN', '99999999999999999999'),
      fc.string().filter((t) => !/^[+-]?\d+$/.test(t)),
    );
    const badData = wrongValue
      .filter((v): v is AttributeValue => v !== undefined && v.B === undefined)
      .map((v) => v)
      .chain((v) => fc.constantFrom<AttributeValue>(v, { S: 'text' }));
    fc.assert(
      fc.property(
        recordFor(schema),
        fc.oneof(
          badLease.map((t) => ['leaseDuration', { S: t }] as const),
          badData.map((v) => ['data', v] as const),
        ),
        (record, [attribute, value]) => {
          const item: LockItem = { ...encodeLockItem(schema, record), [attribute]: value };
          expect(() => decodeLockItem(schema, item)).toThrow(MalformedLockItemError);
        },
      ),
      { numRuns: 300 },
    );
  });
});
