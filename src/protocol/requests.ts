/**
 * The input of every write of a lock item the protocol sends (PROTOCOL.md §4),
 * as pure functions: no I/O, no clock, no randomness. Reads, listings and
 * the table's own requests: table-requests.ts.
 */
import type { AttributeValue, DeleteItemCommandInput, PutItemCommandInput, UpdateItemCommandInput } from '@aws-sdk/client-dynamodb';
import type { LockKey } from '../base/lock-key.js';
import { IS_RELEASED_VALUE, LockAttribute, type KeySchemaNames, type LockTable } from './attributes.js';
import { CLOCK_STAMP_ATTRIBUTE, formatClockStamp } from './clock-stamp.js';
import { encodeLockItem, formatLeaseDuration, type LockItem, type LockRecordToWrite } from './codec.js';
import { Condition, Update, holderCondition, setListExpression, uncertainRvnPlaceholder } from './expressions.js';
import { validateItemSize, validateLockKey } from './limits.js';

/** A conditional write, tagged with the DynamoDB operation that carries it. */
export type LockWriteRequest =
  | { readonly operation: 'PutItem'; readonly input: PutItemCommandInput }
  | { readonly operation: 'UpdateItem'; readonly input: UpdateItemCommandInput }
  | { readonly operation: 'DeleteItem'; readonly input: DeleteItemCommandInput };

type Names = Record<string, string>;
type Values = Record<string, AttributeValue>;

/** The primary key of a lock item; validates the key values first. */
/** The key an item is stored under, when its key attributes are strings (`undefined` otherwise): the inverse of {@link lockItemKey}. */
export function keyOfLockItem(schema: KeySchemaNames, item: LockItem): LockKey | undefined {
  const partitionKey = item[schema.partitionKeyName]?.S;
  if (partitionKey === undefined) return undefined;
  if (schema.sortKeyName === undefined) return { partitionKey };
  const sortKey = item[schema.sortKeyName]?.S;
  return sortKey === undefined ? undefined : { partitionKey, sortKey };
}

export function lockItemKey(schema: KeySchemaNames, key: LockKey): LockItem {
  validateLockKey(schema, key);
  const item: LockItem = { [schema.partitionKeyName]: { S: key.partitionKey } };
  if (schema.sortKeyName !== undefined && key.sortKey !== undefined) {
    item[schema.sortKeyName] = { S: key.sortKey };
  }
  return item;
}

function keyNames(schema: KeySchemaNames): Names {
  const names: Names = { '#pk': schema.partitionKeyName };
  if (schema.sortKeyName !== undefined) names['#sk'] = schema.sortKeyName;
  return names;
}

const hasSortKey = (schema: KeySchemaNames): boolean => schema.sortKeyName !== undefined;
const isReleasedValue = (): AttributeValue => ({ S: IS_RELEASED_VALUE });

/** How the lock looked when the acquirer decided to write. */
export type AcquisitionPath =
  /** No item: create it (C1/C2). */
  | { readonly kind: 'absent' }
  /**
   * A released item: take it (C3/C4), or with `readRecordVersionNumber` only if
   * it is still the released item that was read (C5/C6,
   * `acquireReleasedLocksConsistently`).
   */
  | { readonly kind: 'released'; readonly readRecordVersionNumber?: string | undefined }
  /** A held item whose RVN stayed unchanged for its whole lease: take it over (C7/C8). */
  | { readonly kind: 'expired'; readonly watchedRecordVersionNumber: string };

export interface AcquireRequestOptions {
  /** Write with UpdateItem (keeping attributes the new item does not set) instead of PutItem. */
  readonly updateExistingLockRecord?: boolean | undefined;
  /** Wall-clock epoch ms to stamp beside the written RVN (the bounded-clock option); none without it. */
  readonly writtenAt?: number | undefined;
}

function acquisitionCondition(
  schema: KeySchemaNames,
  path: AcquisitionPath,
): {
  condition: string;
  names: Names;
  values: Values;
} {
  const names = keyNames(schema);
  const values: Values = {};
  const sk = hasSortKey(schema);
  switch (path.kind) {
    case 'absent':
      return { condition: sk ? Condition.absentWithSortKey : Condition.absent, names, values };
    case 'released': {
      names['#ir'] = LockAttribute.isReleased;
      values[':ir'] = isReleasedValue();
      if (path.readRecordVersionNumber === undefined) {
        return { condition: sk ? Condition.releasedWithSortKey : Condition.released, names, values };
      }
      names['#rvn'] = LockAttribute.recordVersionNumber;
      values[':rvn'] = { S: path.readRecordVersionNumber };
      return {
        condition: sk ? Condition.releasedConsistentlyWithSortKey : Condition.releasedConsistently,
        names,
        values,
      };
    }
    case 'expired':
      names['#rvn'] = LockAttribute.recordVersionNumber;
      values[':rvn'] = { S: path.watchedRecordVersionNumber };
      return { condition: sk ? Condition.expiredWithSortKey : Condition.expired, names, values };
  }
}

const withValues = (values: Values): { ExpressionAttributeValues?: Values } =>
  Object.keys(values).length === 0 ? {} : { ExpressionAttributeValues: values };

/** The write that acquires a lock (PROTOCOL.md §4.2–4.5). */
export function buildAcquireRequest(
  table: LockTable,
  record: LockRecordToWrite,
  path: AcquisitionPath,
  options: AcquireRequestOptions = {},
): LockWriteRequest {
  const key = lockItemKey(table, record);
  const item = encodeLockItem(table, record);
  if (options.writtenAt !== undefined) item[CLOCK_STAMP_ATTRIBUTE] = { S: formatClockStamp(record.recordVersionNumber, options.writtenAt) };
  validateItemSize(item);
  const { condition, names, values } = acquisitionCondition(table, path);

  if (!options.updateExistingLockRecord) {
    return {
      operation: 'PutItem',
      input: {
        TableName: table.tableName,
        Item: item,
        ConditionExpression: condition,
        ExpressionAttributeNames: names,
        ...withValues(values),
      },
    };
  }

  const entries = Object.entries(item).filter(([name]) => name !== table.partitionKeyName && name !== table.sortKeyName);
  entries.forEach(([name, value], i) => {
    names[`#k${i}`] = name;
    values[`:v${i}`] = value;
  });
  let update = setListExpression(entries.length);
  if (path.kind !== 'absent') {
    // A takeover must never leave a held item flagged released.
    names['#ir'] = LockAttribute.isReleased;
    update += Update.removeIsReleasedSuffix;
  }
  return {
    operation: 'UpdateItem',
    input: {
      TableName: table.tableName,
      Key: key,
      UpdateExpression: update,
      ConditionExpression: condition,
      ExpressionAttributeNames: names,
      ExpressionAttributeValues: values,
    },
  };
}

/**
 * Asks DynamoDB to return the current item when the condition fails, so a
 * refusal can name the holder without another read. Java peers never see
 * the difference: it changes only the reply.
 */
export function withOldItemOnConditionFailure(request: LockWriteRequest): LockWriteRequest {
  return {
    operation: request.operation,
    input: { ...request.input, ReturnValuesOnConditionCheckFailure: 'ALL_OLD' },
  } as LockWriteRequest;
}

/** The holder's proof of ownership: the RVN it last wrote and its owner name. */
export interface HeldLockState extends LockKey {
  readonly ownerName: string;
  /** The RVN of the holder's last confirmed write. */
  readonly recordVersionNumber: string;
  /**
   * RVNs of later writes of the holder whose replies were lost: any of them
   * may be in the table. Accepted as proof too.
   */
  readonly uncertainRecordVersionNumbers?: readonly string[] | undefined;
}

export interface HolderProofOptions {
  /** Refuse an item marked released (PROTOCOL.md §9.2 item 3). @default false, as Java */
  readonly refuseReleased?: boolean | undefined;
}

/** The holder's condition (C10/C9 with our extensions), its names and its values; shared with the guard of a guarded write. */
export function heldByOwner(
  schema: KeySchemaNames,
  held: HeldLockState,
  proof: HolderProofOptions,
): { condition: string; names: Names; values: Values } {
  const names: Names = {
    ...keyNames(schema),
    '#on': LockAttribute.ownerName,
    '#rvn': LockAttribute.recordVersionNumber,
  };
  const values: Values = { ':rvn': { S: held.recordVersionNumber }, ':on': { S: held.ownerName } };
  const uncertain = held.uncertainRecordVersionNumbers ?? [];
  uncertain.forEach((rvn, i) => {
    values[uncertainRvnPlaceholder(i)] = { S: rvn };
  });
  const refuseReleased = proof.refuseReleased === true;
  if (refuseReleased) names['#ir'] = LockAttribute.isReleased;
  return {
    condition: holderCondition({ sortKey: hasSortKey(schema), refuseReleased, uncertainRvnCount: uncertain.length }),
    names,
    values,
  };
}

export interface HeartbeatRequestOptions extends HolderProofOptions {
  readonly newRecordVersionNumber: string;
  /** The lease to advertise from now on. */
  readonly leaseDurationMs: number;
  /** Replace the lock's data. */
  readonly data?: Uint8Array | undefined;
  /** Remove the lock's data. */
  readonly deleteData?: boolean | undefined;
  /** Wall-clock epoch ms to stamp beside the new RVN (the bounded-clock option); none without it. */
  readonly writtenAt?: number | undefined;
}

/** The heartbeat UpdateItem (PROTOCOL.md §4.7). */
export function buildHeartbeatRequest(table: LockTable, held: HeldLockState, options: HeartbeatRequestOptions): LockWriteRequest {
  const { condition, names, values } = heldByOwner(table, held, options);
  names['#ld'] = LockAttribute.leaseDuration;
  values[':newRvn'] = { S: options.newRecordVersionNumber };
  values[':ld'] = { S: formatLeaseDuration(options.leaseDurationMs) };
  let update: string = Update.heartbeat;
  if (options.deleteData) {
    names['#d'] = LockAttribute.data;
    update = Update.heartbeatDeletingData;
  } else if (options.data !== undefined) {
    names['#d'] = LockAttribute.data;
    values[':d'] = { B: options.data };
    update = Update.heartbeatReplacingData;
  }
  if (options.writtenAt !== undefined) {
    names['#wa'] = CLOCK_STAMP_ATTRIBUTE;
    values[':wa'] = { S: formatClockStamp(options.newRecordVersionNumber, options.writtenAt) };
    // Into the SET list, before U4's REMOVE.
    update = options.deleteData ? `${Update.heartbeat}${Update.clockStamp} REMOVE #d` : update + Update.clockStamp;
  }
  return {
    operation: 'UpdateItem',
    input: {
      TableName: table.tableName,
      Key: lockItemKey(table, held),
      ConditionExpression: condition,
      UpdateExpression: update,
      ExpressionAttributeNames: names,
      ExpressionAttributeValues: values,
    },
  };
}

export interface ReleaseRequestOptions extends HolderProofOptions {
  /** Delete the item (true) or keep it, marked released (false). */
  readonly deleteLock: boolean;
  /** Data to leave on a lock that is marked released; ignored when deleting. */
  readonly data?: Uint8Array | undefined;
  /**
   * With `deleteLock: false`, also replace the RVN (PROTOCOL.md §9.2 item 2),
   * so that neither a late heartbeat nor a replayed release can match the
   * released item. Java leaves the RVN unchanged. @default none
   */
  readonly newRecordVersionNumber?: string | undefined;
}

/** The release DeleteItem or mark-released UpdateItem (PROTOCOL.md §4.8). */
export function buildReleaseRequest(table: LockTable, held: HeldLockState, options: ReleaseRequestOptions): LockWriteRequest {
  const { condition, names, values } = heldByOwner(table, held, options);
  const key = lockItemKey(table, held);
  if (options.deleteLock) {
    return {
      operation: 'DeleteItem',
      input: {
        TableName: table.tableName,
        Key: key,
        ConditionExpression: condition,
        ExpressionAttributeNames: names,
        ExpressionAttributeValues: values,
      },
    };
  }
  names['#ir'] = LockAttribute.isReleased;
  values[':ir'] = isReleasedValue();
  const bumpRvn = options.newRecordVersionNumber !== undefined;
  if (bumpRvn) values[':newRvn'] = { S: options.newRecordVersionNumber };
  let update: string = bumpRvn ? Update.markReleasedWithNewRvn : Update.markReleased;
  if (options.data !== undefined) {
    names['#d'] = LockAttribute.data;
    values[':d'] = { B: options.data };
    update = bumpRvn ? Update.markReleasedWithDataAndNewRvn : Update.markReleasedWithData;
  }
  return {
    operation: 'UpdateItem',
    input: {
      TableName: table.tableName,
      Key: key,
      UpdateExpression: update,
      ConditionExpression: condition,
      ExpressionAttributeNames: names,
      ExpressionAttributeValues: values,
    },
  };
}
