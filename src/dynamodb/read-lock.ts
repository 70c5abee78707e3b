/** The consistent read of one lock item (PROTOCOL.md §4.1). */
import { GetItemCommand, type DynamoDBClient } from '@aws-sdk/client-dynamodb';
import type { MonotonicClock } from '../base/clock.js';
import type { LockKey } from '../base/lock-key.js';
import { buildGetLockRequest, decodeLockItem, type LockRecord, type LockTable } from '../protocol/index.js';

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
  const output = await dynamoDB.send(new GetItemCommand(buildGetLockRequest(table, key)), { abortSignal: signal });
  const observedAt = clock.now();
  if (output.Item === undefined || Object.keys(output.Item).length === 0) return undefined;
  return { record: decodeLockItem(table, output.Item), observedAt };
}
