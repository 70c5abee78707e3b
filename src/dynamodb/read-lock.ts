/** The consistent read of one lock item (PROTOCOL.md §4.1). */
import { GetItemCommand, type DynamoDBClient } from '@aws-sdk/client-dynamodb';
import type { MonotonicClock } from '../base/clock.js';
import type { LockKey } from '../base/lock-key.js';
import { buildGetLockRequest, decodeLockItem, itemOrNone, type LockItem, type LockRecord, type LockTable } from '../protocol/index.js';

/** A lock item as one response showed it, and when: what a waiter times a holder's RVN from. */
export interface LockObservation {
  readonly record: LockRecord;
  /** Monotonic time at which the response that showed the item arrived. */
  readonly observedAt: number;
}

export async function readLock(
  dynamoDB: Pick<DynamoDBClient, 'send'>,
  table: LockTable,
  key: LockKey,
  clock: MonotonicClock,
  signal?: AbortSignal,
): Promise<LockObservation | undefined> {
  const item = await readLockItem(dynamoDB, table, key, signal);
  const observedAt = clock.now();
  return item === undefined ? undefined : { record: decodeLockItem(table, item), observedAt };
}

/** The lock item as it is stored, undecoded (it may be malformed); `undefined` when there is none. */
export async function readLockItem(
  dynamoDB: Pick<DynamoDBClient, 'send'>,
  table: LockTable,
  key: LockKey,
  signal?: AbortSignal,
): Promise<LockItem | undefined> {
  const output = await dynamoDB.send(new GetItemCommand(buildGetLockRequest(table, key)), { abortSignal: signal });
  return itemOrNone(output.Item);
}
