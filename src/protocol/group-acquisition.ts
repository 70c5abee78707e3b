/**
 * A group acquisition (our extension; `LockClient.acquireLocks`): the
 * acquisition writes of several locks in one `TransactWriteItems` call, so
 * that all of them commit or none. Each lock item is exactly the PutItem a
 * single acquisition sends on the same observation (requests.ts), with the
 * same condition; a Java client sees ordinary lock items. With fencing, each
 * key's counter step (fencing.ts) joins the same transaction.
 */
import type { AttributeValue, TransactWriteItem } from '@aws-sdk/client-dynamodb';
import { InvalidArgumentError } from '../base/errors.js';
import type { LockTable } from './attributes.js';
import type { LockRecordToWrite } from './codec.js';
import { asTransactItem, buildFencedAcquisition } from './fencing.js';
import { itemSizeBytes } from './limits.js';
import { buildAcquireRequest, type AcquisitionPath } from './requests.js';

/** DynamoDB's limit on the items of one `TransactWriteItems` call. */
export const MAX_TRANSACTION_ITEMS = 100;
/** DynamoDB's limit on the aggregate size of the items of one transaction. */
export const MAX_TRANSACTION_BYTES = 4 * 1024 * 1024;

/** How many locks one group may hold: each fenced lock takes two items of the transaction, its own and its counter's. */
export function maxGroupSize(fenced: boolean): number {
  return fenced ? MAX_TRANSACTION_ITEMS / 2 : MAX_TRANSACTION_ITEMS;
}

/** One lock of a group: the record to write and how the lock looked when the write was decided. */
export interface GroupMember {
  readonly record: LockRecordToWrite;
  readonly path: AcquisitionPath;
}

export interface GroupAcquisition {
  /**
   * The lock items first, in the order of the members, so that the
   * cancellation reason at index i is member i's; then, with fencing, each
   * member's counter step in the same order.
   */
  readonly items: TransactWriteItem[];
  /** With fencing: the token each member gets if the transaction commits. */
  readonly tokens: readonly (bigint | undefined)[];
}

/**
 * The transaction that takes every member at once. `fencing`: the fencing
 * table and the counter value read for each member (`undefined`: no item).
 * `writtenAt`: the wall-clock stamp of every member (the bounded-clock option).
 */
export function buildGroupAcquisition(
  table: LockTable,
  members: readonly GroupMember[],
  fencing?: { readonly table: LockTable; readonly seen: readonly (bigint | undefined)[] },
  writtenAt?: number,
): GroupAcquisition {
  const requests = members.map(({ record, path }) => buildAcquireRequest(table, record, path, { writtenAt }));
  if (fencing === undefined) return { items: requests.map(asTransactItem), tokens: members.map(() => undefined) };
  const fenced = requests.map((request, i) => {
    const { record } = members[i] as GroupMember;
    return buildFencedAcquisition(
      fencing.table,
      { request, key: record, ownerName: record.ownerName, recordVersionNumber: record.recordVersionNumber },
      fencing.seen[i],
    );
  });
  return { items: [...fenced.map((one) => one.items[0]), ...fenced.map((one) => one.items[1])], tokens: fenced.map((one) => one.token) };
}

/** Refuses lock items that together exceed DynamoDB's limit on a transaction's size. */
export function validateGroupSize(items: readonly Record<string, AttributeValue>[]): void {
  const total = items.reduce((sum, item) => sum + itemSizeBytes(item), 0);
  if (total > MAX_TRANSACTION_BYTES) {
    throw new InvalidArgumentError(
      'ITEM_TOO_LARGE',
      `The lock items would be ${total} bytes together (data and additional attributes included); DynamoDB allows at most ${MAX_TRANSACTION_BYTES} in one transaction`,
    );
  }
}
