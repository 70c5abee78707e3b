/**
 * The critical-section effect of a `--fenced` chaos run: a read-modify-write
 * of one counter item per key in a data table. Each write sets `n` to the
 * value it read plus one and adds one to `w`, so in the final state
 * `w - n` counts the updates that were lost (two writers that read the same
 * `n`). With guarded writes it must stay 0; `--fenced unguarded` sends the
 * same writes without the lock's check, to show what the check prevents.
 *
 * Guarded runs also fence: the workers' lock clients have a fencing table,
 * and each write stores the lock's fencing token on the counter item on the
 * condition that the item holds no larger one. A write the guard let through
 * but that condition refused (`fencedOut`) would be a token that went
 * backwards from one hold to the next: it must never happen.
 *
 * A late write takes its check first (the guard, or `throwIfLost()`), then
 * stalls the whole process with its event loop blocked for longer than the
 * lease (so no heartbeat, no timer, no signal can run: a stop-the-world
 * pause the worker ignores on purpose), and only then writes.
 */
import {
  GetItemCommand,
  TransactWriteItemsCommand,
  UpdateItemCommand,
  type DynamoDBClient,
  type TransactWriteItem,
  type Update,
} from '@aws-sdk/client-dynamodb';
import { isGuardedWriteCanceledError, isGuardedWriteOutcomeUnknownError, isLockLostError, type Lock, type LockLostError } from '../src/index.js';
import { classifyFailedWrite } from '../src/dynamodb/write-outcome.js';
import type { WriteOutcome } from './events.js';

export type FencedMode = 'guarded' | 'unguarded';

export interface CounterWriter {
  readonly dynamoDB: Pick<DynamoDBClient, 'send'>;
  readonly dataTable: string;
  readonly mode: FencedMode;
  /** How long each request to the counter table may go unanswered. @default COUNTER_REQUEST_TIMEOUT_MS */
  readonly requestTimeoutMs?: number;
}

/** How a write ended, and the loss it revealed, if it did. */
export interface CounterWrite {
  readonly outcome: WriteOutcome;
  readonly lost?: LockLostError;
}

/**
 * How long the worker's own requests to the counter table may go unanswered:
 * the client README shows sets no request timeout, and a request the proxy
 * drops would otherwise hang its worker for good (a pause-only one is never
 * restarted). A write abandoned so may have been applied: its outcome is
 * unknown. Far above any delay the proxy injects and the SDK's backoffs.
 */
const COUNTER_REQUEST_TIMEOUT_MS = 5_000;

const bounded = (writer: CounterWriter) => ({ abortSignal: AbortSignal.timeout(writer.requestTimeoutMs ?? COUNTER_REQUEST_TIMEOUT_MS) });

/** The counter item's `n`, read consistently (0 before the first write). */
export async function readCounter(writer: CounterWriter, key: string): Promise<number> {
  const output = await writer.dynamoDB.send(
    new GetItemCommand({ TableName: writer.dataTable, Key: { id: { S: key } }, ConsistentRead: true }),
    bounded(writer),
  );
  return Number(output.Item?.['n']?.N ?? '0');
}

function counterUpdate(writer: CounterWriter, key: string, seen: number, token: bigint | undefined): Update {
  const update: Update = {
    TableName: writer.dataTable,
    Key: { id: { S: key } },
    UpdateExpression: 'SET #n = :next ADD #w :one',
    ExpressionAttributeNames: { '#n': 'n', '#w': 'w' },
    ExpressionAttributeValues: { ':next': { N: String(seen + 1) }, ':one': { N: '1' } },
  };
  if (token === undefined) return update;
  return {
    ...update,
    UpdateExpression: 'SET #n = :next, #t = :token ADD #w :one',
    ConditionExpression: 'attribute_not_exists(#t) OR #t <= :token',
    ExpressionAttributeNames: { ...update.ExpressionAttributeNames, '#t': 'fencingToken' },
    ExpressionAttributeValues: { ...update.ExpressionAttributeValues, ':token': { N: token.toString() } },
  };
}

/** Sets `n` to `seen + 1` now: through `lock.transactWrite`, or (unguarded) with a plain UpdateItem. */
export async function writeCounter(writer: CounterWriter, lock: Lock, key: string, seen: number): Promise<CounterWrite> {
  if (writer.mode === 'unguarded') return plainWrite(writer, key, seen);
  try {
    await lock.transactWrite([{ Update: counterUpdate(writer, key, seen, lock.fencingToken) }]);
    return { outcome: 'committed' };
  } catch (error) {
    if (isLockLostError(error)) {
      const refusedByDynamoDB = (error.cause as { name?: unknown } | undefined)?.name === 'TransactionCanceledException';
      return { outcome: refusedByDynamoDB ? 'refused' : 'refusedLocally', lost: error };
    }
    if (isGuardedWriteCanceledError(error)) return { outcome: error.failedConditions.length > 0 ? 'fencedOut' : 'canceled' };
    if (isGuardedWriteOutcomeUnknownError(error)) return { outcome: 'unknown' };
    return { outcome: 'failed' };
  }
}

/** Takes the check now, stalls for `pauseMs` ignoring everything, then writes what it would have written before. */
export async function writeCounterLate(writer: CounterWriter, lock: Lock, key: string, seen: number, pauseMs: number): Promise<CounterWrite> {
  let guard: TransactWriteItem | undefined;
  try {
    if (writer.mode === 'guarded') guard = lock.guardCondition();
    else lock.throwIfLost();
  } catch (error) {
    if (isLockLostError(error)) return { outcome: 'refusedLocally', lost: error };
    throw error;
  }
  stallProcess(pauseMs);
  if (guard === undefined) return plainWrite(writer, key, seen);
  try {
    const write = counterUpdate(writer, key, seen, lock.fencingToken);
    await writer.dynamoDB.send(new TransactWriteItemsCommand({ TransactItems: [guard, { Update: write }] }), bounded(writer));
    return { outcome: 'committed' };
  } catch (error) {
    const reasons = (error as { name?: unknown; CancellationReasons?: { Code?: string }[] }).CancellationReasons;
    if ((error as { name?: unknown }).name === 'TransactionCanceledException') {
      if (reasons?.[0]?.Code === 'ConditionalCheckFailed') return { outcome: 'refused' };
      return { outcome: reasons?.[1]?.Code === 'ConditionalCheckFailed' ? 'fencedOut' : 'canceled' };
    }
    return { outcome: outcomeOfFailure(error) };
  }
}

async function plainWrite(writer: CounterWriter, key: string, seen: number): Promise<CounterWrite> {
  try {
    await writer.dynamoDB.send(new UpdateItemCommand(counterUpdate(writer, key, seen, undefined)), bounded(writer));
    return { outcome: 'committed' };
  } catch (error) {
    return { outcome: outcomeOfFailure(error) };
  }
}

function outcomeOfFailure(error: unknown): WriteOutcome {
  return classifyFailedWrite(error, { ownerName: '', recordVersionNumbers: [] }).outcome === 'unapplied' ? 'failed' : 'unknown';
}

/** Blocks this thread, and with it every timer, heartbeat and signal of the process, for `ms`. */
function stallProcess(ms: number): void {
  Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, ms);
}
