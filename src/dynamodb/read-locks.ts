/**
 * The consistent reads of several lock items with BatchGetItem, up to 100
 * keys a call: what one GetItem of each would show, in far fewer calls.
 * DynamoDB may leave keys unprocessed (throughput): those are read again
 * after a pause that doubles, until every key was read or the caller's
 * signal ends the call.
 */
import { BatchGetItemCommand, type DynamoDBClient } from '@aws-sdk/client-dynamodb';
import type { MonotonicClock } from '../base/clock.js';
import { lockId, type LockKey } from '../base/lock-key.js';
import { abortableSleep } from '../primitives/abortable-sleep.js';
import { buildBatchGetLocksRequest, decodeLockItem, keyOfLockItem, MAX_BATCH_GET_KEYS, type LockTable } from '../protocol/index.js';
import type { LockObservation } from './read-lock.js';

/** The first pause before unprocessed keys are read again, ms; it doubles up to the most. */
const UNPROCESSED_PAUSE_MS = { first: 10, most: 500 } as const;

/** Each of `keys` as read, in order (`undefined`: no item); each observed when the reply that carried it arrived. */
export async function readLocks(
  dynamoDB: Pick<DynamoDBClient, 'send'>,
  table: LockTable,
  keys: readonly LockKey[],
  clock: MonotonicClock,
  signal?: AbortSignal,
): Promise<(LockObservation | undefined)[]> {
  const seen = new Map<string, LockObservation>();
  const chunks: LockKey[][] = [];
  for (let i = 0; i < keys.length; i += MAX_BATCH_GET_KEYS) chunks.push(keys.slice(i, i + MAX_BATCH_GET_KEYS));
  await Promise.all(
    chunks.map(async (chunk) => {
      let pending: readonly LockKey[] = chunk;
      for (let pauseMs: number = UNPROCESSED_PAUSE_MS.first; ; pauseMs = Math.min(2 * pauseMs, UNPROCESSED_PAUSE_MS.most)) {
        const output = await dynamoDB.send(new BatchGetItemCommand(buildBatchGetLocksRequest(table, pending)), { abortSignal: signal });
        const observedAt = clock.now();
        for (const item of output.Responses?.[table.tableName] ?? []) {
          const record = decodeLockItem(table, item);
          seen.set(lockId(record), { record, observedAt });
        }
        const unprocessed = output.UnprocessedKeys?.[table.tableName]?.Keys ?? [];
        if (unprocessed.length === 0) return;
        // Every key sent is a string key of this table: it comes back as sent.
        const left = new Set(unprocessed.map((item) => lockId(keyOfLockItem(table, item) as LockKey)));
        pending = pending.filter((key) => left.has(lockId(key)));
        if (pending.length === 0) return;
        await abortableSleep(pauseMs, signal);
      }
    }),
  );
  return keys.map((key) => seen.get(lockId(key)));
}
