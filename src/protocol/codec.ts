/**
 * The item codec: a DynamoDB lock item ⇄ a {@link LockRecord} (PROTOCOL.md §2).
 */
import type { AttributeValue } from '@aws-sdk/client-dynamodb';
import { InvalidArgumentError, MalformedLockItemError } from '../base/errors.js';
import { fromAttributeValues, toAttributeValues, UnstorableValueError, type NativeAttributeValue } from './attribute-values.js';
import type { LockKey } from '../base/lock-key.js';
import { LockAttribute, reservedAttributeNames, type KeySchemaNames } from './attributes.js';
import { CLOCK_STAMP_ATTRIBUTE, stampedWriteTime } from './clock-stamp.js';

export type LockItem = Record<string, AttributeValue>;

/**
 * The item an answer carries, or `undefined` for none: DynamoDB may answer
 * "no item" with an empty one (a refusal's ALL_OLD, a cancellation reason, a
 * GetItem's `Item`, the last page's `LastEvaluatedKey`).
 */
export function itemOrNone(item: LockItem | undefined): LockItem | undefined {
  return item === undefined || Object.keys(item).length === 0 ? undefined : item;
}

/** Attributes the caller stores beside the lock, as plain JavaScript values. */
export type AdditionalAttributes = Record<string, NativeAttributeValue>;

/** One lock item, decoded. */
export interface LockRecord extends LockKey {
  readonly ownerName: string;
  readonly leaseDurationMs: number;
  readonly recordVersionNumber: string;
  readonly isReleased: boolean;
  readonly data: Uint8Array | undefined;
  /**
   * Every attribute that is not part of the protocol. Unlike Java, the sort
   * key attribute is not repeated here.
   */
  readonly additionalAttributes: AdditionalAttributes;
  /**
   * Wall-clock epoch ms at which a client with the bounded-clock option
   * wrote this RVN (clock-stamp.ts); absent when no valid stamp names it.
   */
  readonly writtenAt?: number | undefined;
}

/**
 * What an acquirer writes (PROTOCOL.md §2.3); `isReleased` is never part of
 * it, nor a stamp: one is taken when the write leaves, never copied.
 */
export type LockRecordToWrite = Omit<LockRecord, 'isReleased' | 'writtenAt'>;

const LONG_PATTERN = /^[+-]?\d+$/;

/** `leaseDuration` as Java's `String.valueOf(long)` writes it. */
export function formatLeaseDuration(ms: number): string {
  if (!Number.isSafeInteger(ms) || ms < 0) {
    throw new InvalidArgumentError('INVALID_DURATION', `A lease duration must be a whole, non-negative number of milliseconds, got ${ms}`);
  }
  return String(ms);
}

/** `leaseDuration` as Java's `Long.parseLong` reads it; `undefined` when Java would fail too. */
function parseLeaseDuration(text: string): number | undefined {
  if (!LONG_PATTERN.test(text)) return undefined;
  const value = BigInt(text);
  if (value > 9223372036854775807n || value < -9223372036854775808n) return undefined;
  return Number(value);
}

/** DynamoDB nests documents (maps and lists) at most this deep. */
const MAX_NESTING_DEPTH = 32;

function checkStorable(item: LockItem, depth: number, path: string): void {
  for (const [name, value] of Object.entries(item)) {
    if (name.length === 0) {
      throw new InvalidArgumentError(
        'INVALID_ATTRIBUTE_VALUE',
        `Additional attributes: empty attribute name${path === '' ? '' : ` in ${path}`}`,
      );
    }
    checkStorableValue(value, depth, path === '' ? name : `${path}.${name}`);
  }
}

function checkStorableValue(value: AttributeValue, depth: number, path: string): void {
  if (value.M === undefined && value.L === undefined) return;
  if (depth >= MAX_NESTING_DEPTH) {
    throw new InvalidArgumentError(
      'INVALID_ATTRIBUTE_VALUE',
      `Additional attribute ${JSON.stringify(path)} nests deeper than DynamoDB's ${MAX_NESTING_DEPTH} levels`,
    );
  }
  if (value.M !== undefined) checkStorable(value.M, depth + 1, path);
  else value.L?.forEach((element, i) => checkStorableValue(element, depth + 1, `${path}[${i}]`));
}

/**
 * Attribute names refused since the first release, when the AWS SDK's
 * marshall could not carry them (it dropped an own `__proto__` and refused an
 * own `constructor`). Valid DynamoDB names, and read back when another client
 * stored them.
 */
const UNMARSHALLABLE_NAMES: ReadonlySet<string> = new Set(['__proto__', 'constructor']);

function checkMarshallableNames(value: unknown, path: string): void {
  if (Array.isArray(value)) {
    value.forEach((element, i) => checkMarshallableNames(element, `${path}[${i}]`));
    return;
  }
  if (typeof value !== 'object' || value === null || ArrayBuffer.isView(value) || value instanceof Set) return;
  for (const name of Object.keys(value)) {
    const at = path === '' ? name : `${path}.${name}`;
    if (UNMARSHALLABLE_NAMES.has(name)) {
      throw new InvalidArgumentError(
        'INVALID_ATTRIBUTE_VALUE',
        `Additional attribute ${JSON.stringify(at)}: attributes or map keys named "__proto__" or "constructor" cannot be stored`,
      );
    }
    checkMarshallableNames((value as Record<string, unknown>)[name], at);
  }
}

export function encodeAdditionalAttributes(attributes: AdditionalAttributes): LockItem {
  checkMarshallableNames(attributes, '');
  let item: LockItem;
  try {
    item = toAttributeValues(attributes);
  } catch (error) {
    if (!(error instanceof UnstorableValueError)) throw error;
    throw new InvalidArgumentError('INVALID_ATTRIBUTE_VALUE', `Additional attributes cannot be stored in DynamoDB: ${error.message}`);
  }
  checkStorable(item, 0, '');
  return item;
}

export function decodeAdditionalAttributes(item: LockItem): AdditionalAttributes {
  return fromAttributeValues(item);
}

/** Refuses additional attributes that would overwrite or fake a protocol attribute. */
function checkAdditionalAttributeNames(schema: KeySchemaNames, attributes: AdditionalAttributes): void {
  const reserved = reservedAttributeNames(schema);
  const clash = Object.keys(attributes).find((name) => reserved.includes(name));
  if (clash !== undefined) {
    throw new InvalidArgumentError(
      'RESERVED_ATTRIBUTE',
      `Additional attribute ${JSON.stringify(clash)} is reserved by the lock protocol (reserved: ${reserved.join(', ')})`,
    );
  }
}

/** Builds the item of PROTOCOL.md §2.3 (the order of entries mirrors Java's, though nothing depends on it). */
export function encodeLockItem(schema: KeySchemaNames, record: LockRecordToWrite): LockItem {
  checkAdditionalAttributeNames(schema, record.additionalAttributes);
  return assembleLockItem(schema, record, encodeAdditionalAttributes(record.additionalAttributes));
}

/** The same item, from additional attributes that are already encoded. */
export function assembleLockItem(
  schema: KeySchemaNames,
  record: Omit<LockRecordToWrite, 'additionalAttributes'>,
  additionalAttributes: LockItem,
): LockItem {
  const item: LockItem = { ...additionalAttributes };
  item[schema.partitionKeyName] = { S: record.partitionKey };
  item[LockAttribute.ownerName] = { S: record.ownerName };
  item[LockAttribute.leaseDuration] = { S: formatLeaseDuration(record.leaseDurationMs) };
  item[LockAttribute.recordVersionNumber] = { S: record.recordVersionNumber };
  if (schema.sortKeyName !== undefined) {
    if (record.sortKey === undefined) {
      throw new InvalidArgumentError(
        'SORT_KEY_REQUIRED',
        `The lock table has sort key ${JSON.stringify(schema.sortKeyName)}; a sort key value is required`,
      );
    }
    item[schema.sortKeyName] = { S: record.sortKey };
  }
  if (record.data !== undefined) item[LockAttribute.data] = { B: record.data };
  return item;
}

function requireString(item: LockItem, attribute: string, key?: LockKey): string {
  const value = item[attribute];
  if (value === undefined) throw new MalformedLockItemError(attribute, 'is missing', key);
  if (typeof value.S !== 'string') {
    throw new MalformedLockItemError(attribute, `must be a string (S), got ${describeType(value)}`, key);
  }
  return value.S;
}

function describeType(value: AttributeValue): string {
  const type = Object.entries(value).find(([, v]) => v !== undefined)?.[0];
  return type ?? 'an empty value';
}

/**
 * Reads a stored item the way Java does (PROTOCOL.md §2.5), but turns the
 * items Java would crash on into a {@link MalformedLockItemError}.
 */
export function decodeLockItem(schema: KeySchemaNames, item: LockItem): LockRecord {
  const rest: LockItem = { ...item };
  const partitionKey = requireString(rest, schema.partitionKeyName);
  delete rest[schema.partitionKeyName];
  let sortKey: string | undefined;
  if (schema.sortKeyName !== undefined) {
    sortKey = requireString(rest, schema.sortKeyName, { partitionKey });
    delete rest[schema.sortKeyName];
  }
  const key: LockKey = { partitionKey, sortKey };

  const ownerName = requireString(rest, LockAttribute.ownerName, key);
  const leaseText = requireString(rest, LockAttribute.leaseDuration, key);
  const leaseDurationMs = parseLeaseDuration(leaseText);
  if (leaseDurationMs === undefined) {
    throw new MalformedLockItemError(
      LockAttribute.leaseDuration,
      `must be a decimal integer of milliseconds, got ${JSON.stringify(leaseText)}`,
      key,
    );
  }
  const recordVersionNumber = requireString(rest, LockAttribute.recordVersionNumber, key);
  for (const name of [LockAttribute.ownerName, LockAttribute.leaseDuration, LockAttribute.recordVersionNumber]) {
    delete rest[name];
  }

  let data: Uint8Array | undefined;
  const storedData = rest[LockAttribute.data];
  if (storedData !== undefined) {
    if (!(storedData.B instanceof Uint8Array)) {
      throw new MalformedLockItemError(LockAttribute.data, `must be binary (B), got ${describeType(storedData)}`, key);
    }
    data = storedData.B;
    delete rest[LockAttribute.data];
  }

  // Presence alone means released, whatever the type or value (as in Java).
  const isReleased = LockAttribute.isReleased in rest;
  delete rest[LockAttribute.isReleased];

  const writtenAt = stampedWriteTime(rest[CLOCK_STAMP_ATTRIBUTE]?.S, recordVersionNumber);
  delete rest[CLOCK_STAMP_ATTRIBUTE];

  return {
    partitionKey,
    sortKey,
    ownerName,
    leaseDurationMs,
    recordVersionNumber,
    isReleased,
    data,
    additionalAttributes: decodeAdditionalAttributes(rest),
    ...(writtenAt === undefined ? {} : { writtenAt }),
  };
}
