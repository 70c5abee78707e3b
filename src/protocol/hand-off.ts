/**
 * A lock handed from one client to another (`lock.handOff()`,
 * `client.adoptLock()`): the handle's format, read back with every field
 * checked, and the one conditional write that adopts it. The handle is plain
 * JSON, so that it can travel as a workflow's state (a Step Functions
 * state's output) or a message; its `version` names the format, so that a
 * handle made by another copy of the library is refused rather than misread.
 */
import type { UpdateItemCommandInput } from '@aws-sdk/client-dynamodb';
import { LockHandOffError } from '../base/errors.js';
import { LockAttribute, type LockTable } from './attributes.js';
import { formatLeaseDuration, type LockItem } from './codec.js';
import { Update } from './expressions.js';
import { heldByOwner, lockItemKey, type HeldLockState } from './requests.js';

/** What `handle.format` says of every hand-off handle. */
export const HAND_OFF_FORMAT = 'dynamodb-lock/hand-off';
/** The version of the handle's format this copy writes and reads. */
export const HAND_OFF_VERSION = 1;

/** A lock handed off by one client for another to adopt: plain JSON, safe to serialize and pass along. */
export interface LockHandOff {
  readonly format: typeof HAND_OFF_FORMAT;
  readonly version: typeof HAND_OFF_VERSION;
  readonly tableName: string;
  readonly partitionKeyName: string;
  readonly sortKeyName?: string | undefined;
  readonly partitionKey: string;
  readonly sortKey?: string | undefined;
  /** The owner name the lock item carries: the handing-off client's. */
  readonly ownerName: string;
  /** The RVN of the last write the handing-off client confirmed. */
  readonly recordVersionNumber: string;
  /** RVNs of its later writes whose replies were lost: the table may hold any of them instead. */
  readonly uncertainRecordVersionNumbers?: readonly string[] | undefined;
  /** The lease of the last confirmed write, in ms: for reading only; the adopter's lease counts from its own write. */
  readonly leaseDuration: number;
  readonly deleteLockOnRelease: boolean;
  /** With fencing: the acquisition's token, in decimal; the adopter continues that acquisition. */
  readonly fencingToken?: string | undefined;
}

const malformed = (problem: string): LockHandOffError => new LockHandOffError('MALFORMED_HANDLE', `not a lock hand-off handle: ${problem}`);

function text(handle: Record<string, unknown>, field: string, optional = false): string | undefined {
  const value = handle[field];
  if (value === undefined && optional) return undefined;
  if (typeof value !== 'string' || value === '') throw malformed(`${field} must be a non-empty string`);
  return value;
}

/** Reads a handle as `handOff()` made it (the object, or its JSON text); anything else is refused with a {@link LockHandOffError}. */
export function parseLockHandOff(input: unknown): LockHandOff {
  let handle: unknown = input;
  if (typeof input === 'string') {
    try {
      handle = JSON.parse(input);
    } catch (error) {
      throw new LockHandOffError('MALFORMED_HANDLE', 'not a lock hand-off handle: not JSON', { cause: error });
    }
  }
  if (typeof handle !== 'object' || handle === null || Array.isArray(handle)) throw malformed('not an object');
  const fields = handle as Record<string, unknown>;
  if (fields['format'] !== HAND_OFF_FORMAT) throw malformed(`format must be ${JSON.stringify(HAND_OFF_FORMAT)}`);
  if (fields['version'] !== HAND_OFF_VERSION) {
    throw new LockHandOffError(
      'UNSUPPORTED_VERSION',
      `format version ${JSON.stringify(fields['version'])} is not ${HAND_OFF_VERSION}, the one this library reads`,
    );
  }
  const uncertain = fields['uncertainRecordVersionNumbers'];
  if (uncertain !== undefined && !(Array.isArray(uncertain) && uncertain.every((rvn) => typeof rvn === 'string' && rvn !== ''))) {
    throw malformed('uncertainRecordVersionNumbers must be an array of non-empty strings');
  }
  const leaseDuration = fields['leaseDuration'];
  if (typeof leaseDuration !== 'number' || !Number.isSafeInteger(leaseDuration) || leaseDuration <= 0) {
    throw malformed('leaseDuration must be a positive whole number of milliseconds');
  }
  if (typeof fields['deleteLockOnRelease'] !== 'boolean') throw malformed('deleteLockOnRelease must be true or false');
  const fencingToken = text(fields, 'fencingToken', true);
  if (fencingToken !== undefined && !/^\d+$/.test(fencingToken)) throw malformed('fencingToken must be a decimal number');
  return {
    format: HAND_OFF_FORMAT,
    version: HAND_OFF_VERSION,
    tableName: text(fields, 'tableName') as string,
    partitionKeyName: text(fields, 'partitionKeyName') as string,
    sortKeyName: text(fields, 'sortKeyName', true),
    partitionKey: text(fields, 'partitionKey') as string,
    sortKey: text(fields, 'sortKey', true),
    ownerName: text(fields, 'ownerName') as string,
    recordVersionNumber: text(fields, 'recordVersionNumber') as string,
    uncertainRecordVersionNumbers: uncertain as string[] | undefined,
    leaseDuration,
    deleteLockOnRelease: fields['deleteLockOnRelease'],
    fencingToken,
  };
}

/** Refuses a handle of another table, or of the same table under other key names, than `table`. */
export function checkHandOffTable(handle: LockHandOff, table: LockTable): void {
  const same =
    handle.tableName === table.tableName && handle.partitionKeyName === table.partitionKeyName && handle.sortKeyName === table.sortKeyName;
  if (!same) {
    throw new LockHandOffError(
      'OTHER_TABLE',
      `the handle is of table ${JSON.stringify(handle.tableName)}, not this client's ${JSON.stringify(table.tableName)} with the same key names`,
    );
  }
}

/** The handle as the holder's proof the adopting write presents: its owner name and every RVN the table may hold. */
export function handedOffState(handle: LockHandOff): HeldLockState {
  const { partitionKey, sortKey, ownerName, recordVersionNumber, uncertainRecordVersionNumbers } = handle;
  return { partitionKey, sortKey, ownerName, recordVersionNumber, uncertainRecordVersionNumbers };
}

export interface AdoptionWriteOptions {
  /** The adopter's owner name, written in place of the handle's. */
  readonly ownerName: string;
  readonly newRecordVersionNumber: string;
  readonly leaseDurationMs: number;
}

/**
 * The adopting UpdateItem: the holder's own condition (C10/C9: owner name
 * and RVN, with our extensions: the RVNs in doubt, and no released mark),
 * presented with the handle's owner name, writing the adopter's owner name,
 * a new RVN and its lease, as a holder's heartbeat writes the last two. It
 * returns the item as written (its data and additional attributes are the
 * adopter's from now on) and, when refused, the item as found.
 */
export function buildAdoptionRequest(table: LockTable, handle: LockHandOff, adopter: AdoptionWriteOptions): UpdateItemCommandInput {
  const { condition, names, values } = heldByOwner(table, handedOffState(handle), { refuseReleased: true });
  names['#ld'] = LockAttribute.leaseDuration;
  values[':ld'] = { S: formatLeaseDuration(adopter.leaseDurationMs) };
  values[':newRvn'] = { S: adopter.newRecordVersionNumber };
  values[':newOn'] = { S: adopter.ownerName };
  return {
    TableName: table.tableName,
    Key: lockItemKey(table, handle),
    ConditionExpression: condition,
    UpdateExpression: Update.adopt,
    ExpressionAttributeNames: names,
    ExpressionAttributeValues: values,
    ReturnValues: 'ALL_NEW',
    ReturnValuesOnConditionCheckFailure: 'ALL_OLD',
  };
}

/** Whether `item` is still the lock as handed off: the handle's owner name, one of its RVNs, not released. */
export function stillHandedOff(handle: LockHandOff, item: LockItem | undefined): boolean {
  if (item === undefined || item[LockAttribute.isReleased] !== undefined) return false;
  const rvn = item[LockAttribute.recordVersionNumber]?.S;
  const rvns = [handle.recordVersionNumber, ...(handle.uncertainRecordVersionNumbers ?? [])];
  return item[LockAttribute.ownerName]?.S === handle.ownerName && rvn !== undefined && rvns.includes(rvn);
}

/** What a handle is made of: the lock as its holder last knew it. */
export interface HandedOffLock extends HeldLockState {
  readonly leaseDurationMs: number;
  readonly deleteLockOnRelease: boolean;
  readonly fencingToken: bigint | undefined;
}

/** The handle of a lock handed off from `table`. */
export function handOffHandle(table: LockTable, lock: HandedOffLock): LockHandOff {
  const uncertain = lock.uncertainRecordVersionNumbers ?? [];
  return {
    format: HAND_OFF_FORMAT,
    version: HAND_OFF_VERSION,
    tableName: table.tableName,
    partitionKeyName: table.partitionKeyName,
    ...(table.sortKeyName === undefined ? {} : { sortKeyName: table.sortKeyName }),
    partitionKey: lock.partitionKey,
    ...(lock.sortKey === undefined ? {} : { sortKey: lock.sortKey }),
    ownerName: lock.ownerName,
    recordVersionNumber: lock.recordVersionNumber,
    ...(uncertain.length === 0 ? {} : { uncertainRecordVersionNumbers: [...uncertain] }),
    leaseDuration: lock.leaseDurationMs,
    deleteLockOnRelease: lock.deleteLockOnRelease,
    ...(lock.fencingToken === undefined ? {} : { fencingToken: lock.fencingToken.toString() }),
  };
}
