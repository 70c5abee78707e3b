/**
 * DynamoDB's size limits, checked before a request is sent so that bad input
 * fails with a clear {@link InvalidArgumentError} instead of a ValidationException.
 */
import { Buffer } from 'node:buffer';
import type { AttributeValue } from '@aws-sdk/client-dynamodb';
import { InvalidArgumentError } from '../base/errors.js';
import type { LockKey } from '../base/lock-key.js';
import type { KeySchemaNames } from './attributes.js';

export const MAX_PARTITION_KEY_BYTES = 2048;
export const MAX_SORT_KEY_BYTES = 1024;
export const MAX_ITEM_BYTES = 400 * 1024;

// Counts without encoding: a lone surrogate counts as the three bytes of U+FFFD, as TextEncoder would write it.
const byteLength = (text: string): number => Buffer.byteLength(text, 'utf8');

function checkKeyValue(role: 'partition' | 'sort', value: unknown, maxBytes: number): void {
  if (typeof value !== 'string') {
    throw new InvalidArgumentError('EMPTY_KEY', `The ${role} key must be a string, got ${value === null ? 'null' : typeof value}`);
  }
  if (value.length === 0) {
    throw new InvalidArgumentError('EMPTY_KEY', `The ${role} key must not be empty`);
  }
  // DynamoDB keys are UTF-8: every lone surrogate would become U+FFFD, so two such keys would name one item.
  if (!value.isWellFormed()) {
    throw new InvalidArgumentError(
      'MALFORMED_KEY',
      `The ${role} key is not well-formed UTF-16 (it has a lone surrogate): ${JSON.stringify(value)}`,
    );
  }
  const bytes = byteLength(value);
  if (bytes > maxBytes) {
    throw new InvalidArgumentError('KEY_TOO_LONG', `The ${role} key is ${bytes} bytes in UTF-8; DynamoDB allows at most ${maxBytes}`);
  }
}

/** Checks a lock's key values against the table's key schema and DynamoDB's limits. */
export function validateLockKey(schema: KeySchemaNames, key: LockKey): void {
  checkKeyValue('partition', key.partitionKey, MAX_PARTITION_KEY_BYTES);
  if (schema.sortKeyName === undefined) {
    if (key.sortKey !== undefined) {
      throw new InvalidArgumentError(
        'SORT_KEY_NOT_ALLOWED',
        'A sort key was given, but the client has no sortKeyName: the lock table has a partition key only',
      );
    }
    return;
  }
  if (key.sortKey === undefined) {
    throw new InvalidArgumentError(
      'SORT_KEY_REQUIRED',
      `The lock table has sort key ${JSON.stringify(schema.sortKeyName)}; pass options.sortKey`,
    );
  }
  checkKeyValue('sort', key.sortKey, MAX_SORT_KEY_BYTES);
}

/** The size DynamoDB bills an item at: UTF-8 names plus each value's size. */
export function itemSizeBytes(item: Record<string, AttributeValue>): number {
  let total = 0;
  for (const [name, value] of Object.entries(item)) total += byteLength(name) + valueSizeBytes(value);
  return total;
}

/**
 * DynamoDB's "Item sizes and formats": about one byte per two significant
 * digits, plus one. Significant digits are every digit of the mantissa,
 * fractional ones included, with leading and trailing zeros trimmed; the
 * exponent costs nothing.
 */
function numberSizeBytes(text: string): number {
  const mantissa = text
    .replace(/^[-+]/, '')
    .replace(/[eE].*$/, '')
    .replace('.', '');
  const digits = mantissa.replace(/^0+/, '').replace(/0+$/, '').length || 1;
  return Math.ceil(digits / 2) + 1;
}

function valueSizeBytes(value: AttributeValue): number {
  if (value.S !== undefined) return byteLength(value.S);
  if (value.B !== undefined) return value.B.byteLength;
  if (value.N !== undefined) return numberSizeBytes(value.N);
  if (value.BOOL !== undefined || value.NULL !== undefined) return 1;
  if (value.SS !== undefined) return value.SS.reduce((sum, s) => sum + byteLength(s), 0);
  if (value.NS !== undefined) return value.NS.reduce((sum, n) => sum + numberSizeBytes(n), 0);
  if (value.BS !== undefined) return value.BS.reduce((sum, b) => sum + b.byteLength, 0);
  if (value.L !== undefined) return 3 + value.L.reduce((sum, v) => sum + 1 + valueSizeBytes(v), 0);
  if (value.M !== undefined) return 3 + itemSizeBytes(value.M) + Object.keys(value.M).length;
  return 0;
}

export function validateItemSize(item: Record<string, AttributeValue>): void {
  const size = itemSizeBytes(item);
  if (size > MAX_ITEM_BYTES) {
    throw new InvalidArgumentError(
      'ITEM_TOO_LARGE',
      `The lock item would be ${size} bytes (data and additional attributes included); DynamoDB allows at most ${MAX_ITEM_BYTES}`,
    );
  }
}
