/**
 * Attribute names and fixed values of the lock item, exactly as the Java
 * `AmazonDynamoDBLockClient` writes and reads them (PROTOCOL.md §2).
 */

import { CLOCK_STAMP_ATTRIBUTE } from './clock-stamp.js';

/** Partition key attribute name used when none is configured. */
export const DEFAULT_PARTITION_KEY_NAME = 'key';

/** Attribute names every lock item carries besides its key attributes. */
export const LockAttribute = Object.freeze({
  ownerName: 'ownerName',
  /** Lease in milliseconds as a decimal string (type `S`, never `N`). */
  leaseDuration: 'leaseDuration',
  recordVersionNumber: 'recordVersionNumber',
  /** Present (as `S "1"`) only on items released without being deleted. */
  isReleased: 'isReleased',
  /** Opaque user bytes (type `B`). */
  data: 'data',
});

/** The only value ever written to `isReleased`; readers treat mere presence as released. */
export const IS_RELEASED_VALUE = '1';

/** Names the protocol owns; callers may not use them as additional attributes. */
export function reservedAttributeNames(schema: KeySchemaNames): string[] {
  const names = [
    schema.partitionKeyName,
    LockAttribute.ownerName,
    LockAttribute.leaseDuration,
    LockAttribute.recordVersionNumber,
    LockAttribute.data,
    // Java does not reject this one; a lock written with it would be born released.
    LockAttribute.isReleased,
    // Ours (clock-stamp.ts): a user's value there could fake a long-dead lock.
    CLOCK_STAMP_ATTRIBUTE,
  ];
  if (schema.sortKeyName !== undefined) names.push(schema.sortKeyName);
  return names;
}

/** The key attribute names a lock table is configured with. */
export interface KeySchemaNames {
  readonly partitionKeyName: string;
  readonly sortKeyName?: string | undefined;
}

/** Where a lock lives: the table and its key attribute names. */
export interface LockTable extends KeySchemaNames {
  readonly tableName: string;
}
