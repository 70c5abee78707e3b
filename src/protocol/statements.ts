/**
 * Lock writes as PartiQL statements, for sending many in one
 * BatchExecuteStatement call (at most {@link MAX_BATCH_STATEMENTS}): the
 * heartbeat, and the new-lock write (below). Each statement succeeds or
 * fails on its own; other clients, Java's included, only ever see the item.
 *
 * The heartbeat statement writes exactly what the heartbeat UpdateItem (U3)
 * writes, under the same condition (C9/C10 with this library's extensions):
 * a PartiQL UPDATE fails its condition on an absent item rather than
 * creating one, so the key equality stands in for `attribute_exists(#pk)`.
 */
import type { AttributeValue, BatchStatementRequest } from '@aws-sdk/client-dynamodb';
import { InvalidArgumentError } from '../base/errors.js';
import { LockAttribute, type LockTable } from './attributes.js';
import { CLOCK_STAMP_ATTRIBUTE, formatClockStamp } from './clock-stamp.js';
import { formatLeaseDuration, type LockItem } from './codec.js';
import { validateLockKey } from './limits.js';
import type { HeartbeatRequestOptions, HeldLockState } from './requests.js';

/** DynamoDB's limit on statements in one BatchExecuteStatement call. */
export const MAX_BATCH_STATEMENTS = 25;

/**
 * PartiQL quotes identifiers in double quotes. DynamoDB's table names cannot
 * contain one; a key attribute name could, and is then not batched.
 */
export function canBatchHeartbeats(table: LockTable): boolean {
  const names = [table.tableName, table.partitionKeyName, table.sortKeyName ?? ''];
  return names.every((name) => !name.includes('"'));
}

const quoted = (identifier: string): string => `"${identifier}"`;

/** The background heartbeat (no data change) as one statement of a batch. */
export function buildHeartbeatStatement(
  table: LockTable,
  held: HeldLockState,
  options: Pick<HeartbeatRequestOptions, 'newRecordVersionNumber' | 'leaseDurationMs' | 'refuseReleased' | 'writtenAt'>,
): BatchStatementRequest {
  if (!canBatchHeartbeats(table)) {
    throw new InvalidArgumentError('INVALID_OPTION', `cannot quote the key names of table ${table.tableName} in PartiQL`);
  }
  validateLockKey(table, held);
  const parameters: AttributeValue[] = [{ S: formatLeaseDuration(options.leaseDurationMs) }, { S: options.newRecordVersionNumber }];
  let statement =
    `UPDATE ${quoted(table.tableName)}` + ` SET ${quoted(LockAttribute.leaseDuration)} = ? SET ${quoted(LockAttribute.recordVersionNumber)} = ?`;
  if (options.writtenAt !== undefined) {
    statement += ` SET ${quoted(CLOCK_STAMP_ATTRIBUTE)} = ?`;
    parameters.push({ S: formatClockStamp(options.newRecordVersionNumber, options.writtenAt) });
  }
  statement += ` WHERE ${quoted(table.partitionKeyName)} = ?`;
  parameters.push({ S: held.partitionKey });
  if (table.sortKeyName !== undefined && held.sortKey !== undefined) {
    statement += ` AND ${quoted(table.sortKeyName)} = ?`;
    parameters.push({ S: held.sortKey });
  }
  const rvns = [held.recordVersionNumber, ...(held.uncertainRecordVersionNumbers ?? [])];
  statement +=
    rvns.length === 1
      ? ` AND ${quoted(LockAttribute.recordVersionNumber)} = ?`
      : ` AND ${quoted(LockAttribute.recordVersionNumber)} IN [${rvns.map(() => '?').join(', ')}]`;
  for (const rvn of rvns) parameters.push({ S: rvn });
  statement += ` AND ${quoted(LockAttribute.ownerName)} = ?`;
  parameters.push({ S: held.ownerName });
  if (options.refuseReleased === true) statement += ` AND ${quoted(LockAttribute.isReleased)} IS MISSING`;
  return { Statement: statement, Parameters: parameters, ReturnValuesOnConditionCheckFailure: 'ALL_OLD' };
}

/**
 * The new-lock write (the PutItem of an absent lock, C1/C2) as one statement
 * of a batch: a PartiQL INSERT of the very item that PutItem writes. It fails
 * with `DuplicateItem` when an item with that key exists, as the PutItem's
 * condition would, but, unlike it, without returning that item. Attribute
 * names are PartiQL string literals (a `'` doubled); table names cannot hold
 * the double quote around them.
 */
export function buildNewLockStatement(table: LockTable, item: LockItem): BatchStatementRequest {
  const names = Object.keys(item);
  const fields = names.map((name) => `'${name.replaceAll("'", "''")}': ?`);
  return {
    Statement: `INSERT INTO ${quoted(table.tableName)} VALUE {${fields.join(', ')}}`,
    Parameters: names.map((name) => item[name] as AttributeValue),
  };
}
