/**
 * JavaScript values ⇄ DynamoDB attribute values, for the additional
 * attributes stored beside a lock. The package owns this conversion rather
 * than take `@aws-sdk/util-dynamodb`, whose releases ask for a newer
 * `@aws-sdk/client-dynamodb` than many applications run (DESIGN.md,
 * "Dependencies").
 */
import type { AttributeValue } from '@aws-sdk/client-dynamodb';
import { NumberValue, readNumber } from './number-value.js';

/**
 * A value stored as an additional attribute: a string, number, bigint,
 * boolean, null, binary (Uint8Array, Buffer, ArrayBuffer or another typed
 * array), {@link NumberValue}, an array, plain object or Map of these, or a
 * non-empty Set of strings, of numbers or of binaries. Typed as loosely as
 * the AWS SDK's `NativeAttributeValue`, so that interfaces fit; another kind
 * of value is refused when written (`INVALID_ATTRIBUTE_VALUE`).
 */
// eslint-disable-next-line @typescript-eslint/no-explicit-any -- as loose as the SDK's type, which user code is written against
export type NativeAttributeValue = any;

/** Why a value cannot be stored; the codec turns it into an InvalidArgumentError. */
export class UnstorableValueError extends Error {
  override readonly name = 'UnstorableValueError';
}

function isPlainObject(value: object): boolean {
  const prototype: unknown = Object.getPrototypeOf(value);
  return prototype === Object.prototype || prototype === null;
}

function binaryOf(value: unknown): Uint8Array | undefined {
  if (value instanceof Uint8Array) return value;
  if (ArrayBuffer.isView(value)) return new Uint8Array(value.buffer, value.byteOffset, value.byteLength);
  if (value instanceof ArrayBuffer) return new Uint8Array(value);
  return undefined;
}

/** The decimal text DynamoDB stores for a number. */
function numberText(value: unknown, path: string): string | undefined {
  if (typeof value === 'bigint') return String(value);
  if (value instanceof NumberValue) return value.value;
  if (typeof value !== 'number') return undefined;
  if (!Number.isFinite(value)) throw new UnstorableValueError(`${path}: DynamoDB cannot store ${value}`);
  if (!Number.isSafeInteger(Math.trunc(value))) {
    throw new UnstorableValueError(
      `${path}: ${value} is beyond Number.MAX_SAFE_INTEGER and may have lost digits; pass a bigint or a NumberValue`,
    );
  }
  return String(value);
}

function setOf(set: Set<unknown>, path: string): AttributeValue {
  const members = [...set].filter((member) => member !== undefined);
  if (members.length === 0) throw new UnstorableValueError(`${path}: DynamoDB cannot store an empty set`);
  if (members.every((member) => typeof member === 'string')) return { SS: members };
  const numbers = members.map((member, i) => numberText(member, `${path}[${i}]`));
  if (numbers.every((text) => text !== undefined)) return { NS: numbers };
  const binaries = members.map(binaryOf);
  if (binaries.every((binary) => binary !== undefined)) return { BS: binaries };
  throw new UnstorableValueError(`${path}: a set must hold only strings, only numbers or only binaries`);
}

function mapOf(entries: Iterable<[unknown, unknown]>, path: string): Record<string, AttributeValue> {
  const map: Record<string, AttributeValue> = {};
  for (const [name, value] of entries) {
    if (typeof name !== 'string') throw new UnstorableValueError(`${path}: a Map's keys must be strings`);
    const at = path === '' ? name : `${path}.${name}`;
    const encoded = toAttributeValue(value, at);
    // defineProperty: a key named "__proto__" becomes an entry, not the prototype.
    if (encoded !== undefined) Object.defineProperty(map, name, { value: encoded, enumerable: true, writable: true, configurable: true });
  }
  return map;
}

/** `undefined` for what is left out, as undefined values and functions are. */
function toAttributeValue(value: unknown, path: string): AttributeValue | undefined {
  if (value === undefined || typeof value === 'function') return undefined;
  if (value === null) return { NULL: true };
  if (typeof value === 'string') return { S: value };
  if (typeof value === 'boolean') return { BOOL: value };
  const number = numberText(value, path);
  if (number !== undefined) return { N: number };
  const binary = binaryOf(value);
  if (binary !== undefined) return { B: binary };
  if (Array.isArray(value)) {
    return { L: value.flatMap((element: unknown, i) => toAttributeValue(element, `${path}[${i}]`) ?? []) };
  }
  if (value instanceof Set) return setOf(value as Set<unknown>, path);
  if (value instanceof Map) return { M: mapOf(value as Map<unknown, unknown>, path) };
  if (typeof value === 'object' && isPlainObject(value)) return { M: mapOf(Object.entries(value), path) };
  const kind = typeof value === 'object' ? (value.constructor?.name ?? 'object') : typeof value;
  throw new UnstorableValueError(`${path}: unsupported type ${kind}; convert it first (a Date to a string or a number, for example)`);
}

/** Each attribute as DynamoDB stores it; undefined values are left out. */
export function toAttributeValues(attributes: Record<string, NativeAttributeValue>): Record<string, AttributeValue> {
  return mapOf(Object.entries(attributes), '');
}

/** A stored value as JavaScript: numbers as `number` where lossless, else {@link NumberValue}; binaries as Uint8Array. */
function fromAttributeValue(value: AttributeValue): NativeAttributeValue {
  if (value.S !== undefined) return value.S;
  if (value.N !== undefined) return readNumber(value.N);
  if (value.BOOL !== undefined) return value.BOOL;
  if (value.NULL !== undefined) return null;
  if (value.B !== undefined) return value.B;
  if (value.L !== undefined) return value.L.map(fromAttributeValue);
  if (value.M !== undefined) return fromAttributeValues(value.M);
  if (value.SS !== undefined) return new Set(value.SS);
  if (value.NS !== undefined) return new Set(value.NS.map(readNumber));
  if (value.BS !== undefined) return new Set(value.BS);
  return undefined; // DynamoDB has no other type
}

/** The attributes as JavaScript values; a stored `__proto__` is an own entry, never the prototype. */
export function fromAttributeValues(item: Record<string, AttributeValue>): Record<string, NativeAttributeValue> {
  const values: Record<string, NativeAttributeValue> = {};
  for (const [name, value] of Object.entries(item)) {
    Object.defineProperty(values, name, { value: fromAttributeValue(value), enumerable: true, writable: true, configurable: true });
  }
  return values;
}
