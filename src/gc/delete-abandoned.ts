/**
 * The delete of an item whose RVN stood still for its lease on this
 * process's clock: conditioned on that RVN and its owner, Java's takeover
 * followed by a release, so a holder that heartbeated meanwhile keeps its
 * item. Abandoned when unanswered for `boundMs`. collectAbandoned and the
 * semaphore's recovery of a stopped holder's permit both delete this way.
 */
import type { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { withinBound } from '../acquire/request-bound.js';
import { sendWrite } from '../dynamodb/send-write.js';
import { buildReleaseRequest, withOldItemOnConditionFailure, type LockTable } from '../protocol/index.js';
import { judgeFailedDelete } from './judge.js';

export interface DeleteAbandonedOptions {
  readonly dynamoDB: Pick<DynamoDBClient, 'send'>;
  readonly table: LockTable;
  readonly boundMs: number;
  readonly signal: AbortSignal;
  /** The error a delete abandoned for its bound rejects with. */
  readonly abandoned?: ((timeout: DOMException) => unknown) | undefined;
}

/** What became of the delete (judge.ts's `judgeFailedDelete`); `error` when it did not succeed. */
export interface DeleteOutcome {
  readonly outcome: 'deleted' | 'gone' | 'taken' | 'failed';
  readonly error?: unknown;
}

export async function deleteAbandoned(
  options: DeleteAbandonedOptions,
  record: Parameters<typeof buildReleaseRequest>[1],
): Promise<DeleteOutcome> {
  const { dynamoDB, table, boundMs, signal, abandoned } = options;
  const request = withOldItemOnConditionFailure(buildReleaseRequest(table, record, { deleteLock: true }));
  try {
    await withinBound(boundMs, signal, (bounded) => sendWrite(dynamoDB, request, bounded), abandoned);
    return { outcome: 'deleted' };
  } catch (error) {
    return { outcome: signal.aborted ? 'failed' : judgeFailedDelete(error), error };
  }
}
