/**
 * The write that releases a held lock (Java's DeleteItem, or an UpdateItem
 * that marks the item released), and what its outcome means. One that gets
 * no answer for the lock's lease is abandoned: heartbeats stopped when the
 * release began, so the lock lapses about then unless the write was applied
 * (DESIGN.md, "Release"), and waiting on tells the caller nothing more (the
 * SDK's own socket timeout is minutes, or none on older versions).
 */
import type { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { randomUUID } from 'node:crypto';
import { DynamoDBTimeoutError } from '../base/errors.js';
import { describeLockKey } from '../base/lock-key.js';
import { attemptsOf, isConditionalCheckFailed } from '../dynamodb/sdk-errors.js';
import { sendWrite } from '../dynamodb/send-write.js';
import { classifyFailedWrite } from '../dynamodb/write-outcome.js';
import { boundedSignal } from '../primitives/bounded-signal.js';
import { buildReleaseRequest, withOldItemOnConditionFailure, type LockTable } from '../protocol/index.js';
import type { HeldLock } from './held-lock.js';
import { loseByRefusal } from './loss.js';

/**
 * - `released`: the table no longer has the lock as ours (also when an SDK
 *   retry was refused by the release its own first attempt applied, found
 *   the item gone, or, within the safe time, found the next holder's item);
 * - `refused`: someone else had it; the lock has ended as lost;
 * - `unapplied`: DynamoDB answered and changed nothing: the lock is still ours;
 * - `unknown`: no definite answer: released, or it lapses after its lease
 *   (a `DynamoDBTimeoutError` when the write got no answer for the lease).
 */
export type ReleaseOutcome =
  { readonly outcome: 'released' | 'refused' } | { readonly outcome: 'unapplied' | 'unknown'; readonly error: unknown };

export interface ReleaseWrite {
  readonly deleteLock: boolean;
  readonly data: Uint8Array | undefined;
  readonly signal: AbortSignal | undefined;
}

export async function writeRelease(
  dynamoDB: Pick<DynamoDBClient, 'send'>,
  table: LockTable,
  held: HeldLock,
  release: ReleaseWrite,
): Promise<ReleaseOutcome> {
  const boundMs = held.leaseDurationMs;
  const bound = boundedSignal(boundMs, release.signal);
  try {
    const outcome = await sendRelease(dynamoDB, table, held, release, bound.signal);
    const { timeout } = bound;
    if (outcome.outcome !== 'unknown' || timeout === undefined) return outcome;
    return { outcome: 'unknown', error: new DynamoDBTimeoutError(`release(${describeLockKey(held)})`, boundMs, timeout) };
  } finally {
    bound.dispose();
  }
}

async function sendRelease(
  dynamoDB: Pick<DynamoDBClient, 'send'>,
  table: LockTable,
  held: HeldLock,
  release: ReleaseWrite,
  signal: AbortSignal,
): Promise<ReleaseOutcome> {
  // A kept item gets a new RVN so that no late heartbeat or replayed release can match it.
  const newRecordVersionNumber = release.deleteLock ? undefined : randomUUID();
  try {
    const request = withOldItemOnConditionFailure(
      buildReleaseRequest(table, held, { deleteLock: release.deleteLock, data: release.data, newRecordVersionNumber, refuseReleased: true }),
    );
    await sendWrite(dynamoDB, request, signal);
    return { outcome: 'released' };
  } catch (error) {
    const ours = { ownerName: held.ownerName, recordVersionNumbers: newRecordVersionNumber === undefined ? [] : [newRecordVersionNumber] };
    const failed = classifyFailedWrite(error, ours);
    switch (failed.outcome) {
      case 'applied':
        return { outcome: 'released' };
      case 'refused':
        if (failed.item !== undefined && (attemptsOf(error) ?? 1) > 1 && held.safeTimeLeft() > 0 && held.safeTimeConfirmed) {
          // An SDK retry met someone else's item while the lock was still within its safe time: nobody
          // can have taken our item over before the earlier attempt landed, so that attempt removed it,
          // and the next holder came after (DESIGN.md, "A retried release"). Not so for a safe time that
          // `holdLockOnServiceUnavailable` counted on from a 503: the RVN may have stood still meanwhile.
          return { outcome: 'released' };
        }
        loseByRefusal(table, held, 'its release was refused', failed.item, error);
        return { outcome: 'refused' };
      case 'unknown':
        // A retry's condition failed on a missing item: an earlier attempt of ours (or someone) deleted
        // it, and no one has taken the lock since. Either way it is free: the release is done.
        if (isConditionalCheckFailed(error)) return { outcome: 'released' };
        return { outcome: 'unknown', error };
      default:
        return { outcome: failed.outcome, error };
    }
  }
}
