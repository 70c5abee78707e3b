/**
 * Guarded writes: the caller's DynamoDB writes and the lock's guard (see
 * protocol/guard.ts) in one TransactWriteItems call, so that they commit
 * only while the lock item shows that this holder still holds the lock,
 * whatever pause came between the caller's last check and the commit.
 *
 * Each guarded write waits in its lock's write queue
 * (`held.queueWrite`): a heartbeat in flight settles first, confirmed or of
 * unknown outcome, so that the guard accepts exactly the RVNs the table may
 * hold, and no heartbeat changes the RVN while the transaction is under way.
 * DynamoDB would not let them overlap anyway: a write to an item that a
 * transaction in progress includes, or a transaction including an item
 * another one is writing, is refused as a conflict.
 */
import type { DynamoDBClient, TransactWriteItem } from '@aws-sdk/client-dynamodb';
import { randomUUID } from 'node:crypto';
import { deadline } from '../primitives/deadline.js';
import { InvalidArgumentError } from '../base/errors.js';
import { GuardedWriteCanceledError, GuardedWriteOutcomeUnknownError, type GuardedWriteCancellation } from './guarded-write-errors.js';
import type { HeldLock } from './held-lock.js';
import type { LockKey } from '../base/lock-key.js';
import { buildLockGuard, itemOrNone, type LockItem, type LockTable } from '../protocol/index.js';
import { cancellationReasonsOf, isFailedConditionCode, isNoCancellationCode } from '../dynamodb/sdk-errors.js';
import { classifyFailedWrite } from '../dynamodb/write-outcome.js';
import { sendTransaction } from '../dynamodb/send-write.js';
import { loseByRefusal } from './loss.js';

/** DynamoDB's limit of actions in one transaction (100), less the lock's guard. */
export const MAX_GUARDED_ITEMS = 99;

export interface GuardedWriteOptions {
  /**
   * Abandons the call. Once the transaction is sent its outcome is then
   * unknown: it rejects with `GuardedWriteOutcomeUnknownError`.
   */
  readonly signal?: AbortSignal;
}

export interface GuardedWriteContext {
  readonly dynamoDB: Pick<DynamoDBClient, 'send'>;
  readonly table: LockTable;
}

const OPERATIONS = ['Put', 'Update', 'Delete', 'ConditionCheck'] as const;

/** Refuses what DynamoDB would refuse about the transaction's shape, and any item that is the lock item itself. */
export function checkGuardedItems(table: LockTable, lock: LockKey, items: readonly TransactWriteItem[]): void {
  if (!Array.isArray(items) || items.length === 0 || items.length > MAX_GUARDED_ITEMS) {
    const got = Array.isArray(items) ? `${items.length} items` : typeof items;
    throw new InvalidArgumentError(
      'INVALID_OPTION',
      `A guarded write takes 1 to ${MAX_GUARDED_ITEMS} items (DynamoDB's 100 per transaction, less the lock's guard), got ${got}`,
    );
  }
  items.forEach((item: TransactWriteItem, index) => {
    const operations = OPERATIONS.filter((name) => typeof item === 'object' && item !== null && item[name] !== undefined);
    const operation = operations[0];
    if (operations.length !== 1 || operation === undefined) {
      throw new InvalidArgumentError('INVALID_OPTION', `Guarded write item ${index} must have exactly one of ${OPERATIONS.join(', ')}`);
    }
    const action = item[operation] as { TableName?: unknown; Key?: LockItem; Item?: LockItem };
    if (typeof action.TableName !== 'string') {
      throw new InvalidArgumentError('INVALID_OPTION', `Guarded write item ${index} (${operation}) has no TableName`);
    }
    const key = operation === 'Put' ? action.Item : action.Key;
    const isLockItem =
      action.TableName === table.tableName &&
      key?.[table.partitionKeyName]?.S === lock.partitionKey &&
      (table.sortKeyName === undefined || key?.[table.sortKeyName]?.S === lock.sortKey);
    if (isLockItem) {
      throw new InvalidArgumentError(
        'INVALID_OPTION',
        `Guarded write item ${index} (${operation}) is the lock item itself; DynamoDB allows one action per item in a transaction, and the lock's guard is that action`,
      );
    }
  });
}

type Settled = { readonly ok: true } | { readonly ok: false; readonly error: unknown };

/**
 * Commits `items` only while the lock is held, or throws: `LockLostError`
 * when the guard was refused (the lock then ends as lost),
 * {@link GuardedWriteCanceledError} when DynamoDB canceled it for the
 * caller's items, {@link GuardedWriteOutcomeUnknownError} when it may have
 * committed; DynamoDB's own error when it refused the request as a whole.
 */
export async function guardedWrite(
  ctx: GuardedWriteContext,
  held: HeldLock,
  items: readonly TransactWriteItem[],
  options: GuardedWriteOptions = {},
): Promise<void> {
  checkGuardedItems(ctx.table, held, items);
  options.signal?.throwIfAborted();
  let settled!: Promise<Settled>;
  const firstAnswer = await held.queueWrite(async () => {
    held.throwUnlessHeld();
    const request = {
      TransactItems: [buildLockGuard(ctx.table, held), ...items],
      // The SDK would add one too; set here so that its retries are certainly idempotent: a token whose
      // transaction committed is answered with success, never evaluated again (for 10 minutes).
      ClientRequestToken: randomUUID(),
    };
    settled = sendTransaction(ctx.dynamoDB, request, options.signal).then(
      (): Settled => ({ ok: true }),
      (error: unknown): Settled => ({ ok: false, error }),
    );
    // The lock's next writes wait for the answer, but not past the lock's safe time: by then the lock is
    // given up anyway, and a connection that never answers must not hold up its release. The call itself
    // still waits for DynamoDB's answer, so that a write sent just before a pause learns it was refused.
    const bound = deadline(held.safeTimeLeft());
    const safeTimeOver = new Promise<undefined>((resolve) => bound.signal.addEventListener('abort', () => resolve(undefined), { once: true }));
    try {
      const first = await Promise.race([settled, safeTimeOver]);
      if (first !== undefined && !first.ok) throw outcomeOf(ctx, held, first.error);
      return first;
    } finally {
      bound.clear();
    }
  });
  const outcome = firstAnswer ?? (await settled);
  if (!outcome.ok) throw outcomeOf(ctx, held, outcome.error);
}

/** What a failed guarded write did, as the error its caller gets. */
function outcomeOf(ctx: GuardedWriteContext, held: HeldLock, error: unknown): unknown {
  const reasons = cancellationReasonsOf(error);
  if (reasons !== undefined) {
    // Canceled means not committed, even after SDK retries: they carry the same ClientRequestToken, and
    // DynamoDB answers a token whose transaction committed with success.
    const [lockReason, ...itemReasons] = reasons;
    if (isFailedConditionCode(lockReason?.Code)) {
      return loseByRefusal(ctx.table, held, 'its guarded write was refused', itemOrNone(lockReason?.Item), error);
    }
    const cancellations: GuardedWriteCancellation[] = [];
    itemReasons.forEach((reason, index) => {
      if (isNoCancellationCode(reason.Code)) return;
      cancellations.push({ index, code: reason.Code as string, message: reason.Message, item: reason.Item });
    });
    const lockCheckCode = isNoCancellationCode(lockReason?.Code) ? undefined : lockReason?.Code;
    return new GuardedWriteCanceledError(held, cancellations, lockCheckCode, { cause: error });
  }
  const failed = classifyFailedWrite(error, { ownerName: held.ownerName, recordVersionNumbers: [] });
  return failed.outcome === 'unapplied' ? error : new GuardedWriteOutcomeUnknownError(held, error);
}
