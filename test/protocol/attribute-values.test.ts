/**
 * The package's own conversion of additional attributes: the same attribute
 * values as the AWS SDK's marshall/unmarshall (a dev dependency here, no
 * longer one of the package) for every value both accept, and a reason for
 * what DynamoDB cannot store.
 */
import { describe, expect, it } from '@jest/globals';
import { marshall, NumberValueImpl as SdkNumberValue, unmarshall } from '@aws-sdk/util-dynamodb';
import fc from 'fast-check';
import { fromAttributeValues, toAttributeValues, UnstorableValueError } from '../../src/protocol/attribute-values.js';
import { NumberValue, readNumber } from '../../src/protocol/number-value.js';

const value = fc.letrec((tie) => ({
  value: fc.oneof(
    { depthSize: 'small' },
    fc.string(),
    fc.integer(),
    fc.double({ noNaN: true, noDefaultInfinity: true, min: -1e15, max: 1e15 }),
    fc.bigInt(),
    fc.boolean(),
    fc.constant(null),
    fc.constant(undefined),
    fc.uint8Array({ maxLength: 8 }),
    fc.uniqueArray(fc.string(), { minLength: 1, maxLength: 3 }).map((strings) => new Set(strings)),
    fc.uniqueArray(fc.integer(), { minLength: 1, maxLength: 3 }).map((numbers) => new Set(numbers)),
    fc.array(tie('value'), { maxLength: 3 }),
    fc.dictionary(
      fc.string({ minLength: 1, maxLength: 6 }).filter((name) => name !== '__proto__'),
      tie('value'),
      { maxKeys: 3 },
    ),
  ),
})).value;
const attributes = fc.dictionary(
  fc.string({ minLength: 1, maxLength: 8 }).filter((name) => name !== '__proto__'),
  value,
  { maxKeys: 4 },
);

/** Reads numbers the way the codec does, with the SDK's class for the unsafe ones. */
const sdkNumber = (text: string): number | SdkNumberValue => {
  const n = readNumber(text);
  return typeof n === 'number' ? n : SdkNumberValue.from(text);
};

/**
 * Sets as arrays and both number classes as their text, so that the two
 * readings compare. An SDK number class holding a safe number counts as that
 * number: the lowest SDK the package supports takes any `wrapNumbers`
 * function for `true` and wraps every number.
 */
const comparable = (read: unknown): unknown =>
  JSON.parse(
    JSON.stringify(read, (_, v: unknown) => {
      if (v instanceof Set) return [...(v as Set<unknown>)];
      if (v instanceof SdkNumberValue) {
        const n = readNumber(v.value);
        return typeof n === 'number' ? n : `number ${v.value}`;
      }
      return v instanceof NumberValue ? `number ${v.value}` : v;
    }),
  );

describe('toAttributeValues and fromAttributeValues', () => {
  it('write what the AWS SDK marshall writes, and read what its unmarshall reads', () => {
    fc.assert(
      fc.property(attributes, (input) => {
        const ours = toAttributeValues(input);
        expect(ours).toEqual(marshall(input, { removeUndefinedValues: true, convertEmptyValues: false }));
        const sdk = unmarshall(ours, { wrapNumbers: sdkNumber }) as Record<string, unknown>;
        expect(comparable(fromAttributeValues(ours))).toEqual(comparable(sdk));
      }),
      { numRuns: 500 },
    );
  });

  it('keep numbers a JavaScript number would round as NumberValue, and bigints and NumberValues as their text', () => {
    const stored = toAttributeValues({ big: 12345678901234567890n, exact: new NumberValue('0.1000000000000000000001'), set: new Set([1n, 2n]) });
    expect(stored).toEqual({ big: { N: '12345678901234567890' }, exact: { N: '0.1000000000000000000001' }, set: { NS: ['1', '2'] } });
    const read = fromAttributeValues(stored) as { big: NumberValue; exact: NumberValue; set: Set<number> };
    expect(read.big).toBeInstanceOf(NumberValue);
    expect(read.big.value).toBe('12345678901234567890');
    expect(String(read.exact)).toBe('0.1000000000000000000001');
    expect(read.set).toEqual(new Set([1, 2]));
  });

  it('store any binary view as the bytes it covers, and Maps as maps', () => {
    const bytes = new Uint8Array([1, 2, 3, 4]);
    expect(toAttributeValues({ view: new DataView(bytes.buffer, 1, 2), whole: bytes.buffer, buffer: Buffer.from('hi') })).toEqual({
      view: { B: new Uint8Array([2, 3]) },
      whole: { B: new Uint8Array([1, 2, 3, 4]) },
      buffer: { B: Buffer.from('hi') },
    });
    expect(toAttributeValues({ tags: new Map([['a', 1]]) })).toEqual({ tags: { M: { a: { N: '1' } } } });
  });

  it('read a stored __proto__ as an own entry, never as the prototype', () => {
    const read = fromAttributeValues(JSON.parse('{"__proto__": {"M": {"polluted": {"BOOL": true}}}}') as never);
    expect(Object.getPrototypeOf(read)).toBe(Object.prototype);
    expect(Object.getOwnPropertyDescriptor(read, '__proto__')?.value).toEqual({ polluted: true });
  });

  it.each([
    ['a Date', { at: new Date(0) }, 'at: unsupported type Date'],
    ['an empty set', { tags: new Set() }, 'tags: DynamoDB cannot store an empty set'],
    ['a set of mixed kinds', { tags: new Set(['a', 1]) }, 'tags: a set must hold only strings'],
    ['NaN', { n: { m: [Number.NaN] } }, 'n.m[0]: DynamoDB cannot store NaN'],
    ['a number past MAX_SAFE_INTEGER', { n: 2 ** 60 }, 'pass a bigint or a NumberValue'],
    ['a Map with a number key', { m: new Map([[1, 'x']]) }, "m: a Map's keys must be strings"],
  ])('refuse %s, saying where and why', (_, input, message) => {
    expect(() => toAttributeValues(input)).toThrow(UnstorableValueError);
    expect(() => toAttributeValues(input)).toThrow(message);
  });

  it('refuse a NumberValue that is not a number', () => {
    expect(() => new NumberValue('12abc')).toThrow('is not a decimal number');
  });
});
