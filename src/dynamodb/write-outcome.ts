/**
 * What a lock write that did not succeed did to the table, as far as this
 * client can know. Acquisitions, heartbeats (single and batched) and
 * releases all sort their failures here, so that every path treats a write
 * whose reply was lost as one that may have been applied.
 *
 * The AWS SDK may send a request several times (its own retries), and stamps
 * the number of attempts on the error it finally throws. Only that last
 * attempt's answer reaches us: when it is a refusal, an earlier attempt may
 * still have been applied. So a refusal counts as "nothing applied" only
 * after a single attempt, and a failed condition whose old item carries the
 * very RVN we sent is our own earlier attempt, applied.
 */
import { attemptsOf, isConditionalCheckFailed, isRefusedByDynamoDB, itemOfFailedCondition, wasNeverSent } from './sdk-errors.js';
import { LockAttribute, type LockItem } from '../protocol/index.js';

export type FailedWrite =
  /** The condition failed against the item as someone else left it (`item` is ALL_OLD; none when absent). */
  | { readonly outcome: 'refused'; readonly item: LockItem | undefined }
  /** The condition failed against our own write (`recordVersionNumber`), which an earlier attempt applied. */
  | { readonly outcome: 'applied'; readonly recordVersionNumber: string }
  /** DynamoDB answered the only attempt and changed nothing, or the request never left this process. */
  | { readonly outcome: 'unapplied' }
  /** It may have been applied: no answer, a 5xx, cut off, or a refusal after more than one attempt. */
  | { readonly outcome: 'unknown' };

/** The writes of ours the table may hold: the owner name and the RVNs we sent. */
export interface OurWrites {
  readonly ownerName: string;
  readonly recordVersionNumbers: readonly string[];
}

export function classifyFailedWrite(error: unknown, ours: OurWrites): FailedWrite {
  // Without a count we cannot rule out an earlier attempt (a client with retries of its own).
  const singleAttempt = attemptsOf(error) === 1;
  if (isConditionalCheckFailed(error)) {
    const found = itemOfFailedCondition(error);
    const recordVersionNumber = found?.[LockAttribute.recordVersionNumber]?.S;
    if (
      recordVersionNumber !== undefined &&
      found?.[LockAttribute.ownerName]?.S === ours.ownerName &&
      ours.recordVersionNumbers.includes(recordVersionNumber)
    ) {
      return { outcome: 'applied', recordVersionNumber };
    }
    // A missing item after a retry may be our own delete, applied by the first attempt.
    if (found === undefined && !singleAttempt) return { outcome: 'unknown' };
    return { outcome: 'refused', item: found };
  }
  if (!singleAttempt) return { outcome: 'unknown' };
  return isRefusedByDynamoDB(error) || wasNeverSent(error) ? { outcome: 'unapplied' } : { outcome: 'unknown' };
}
