/**
 * The transactions of a group acquisition whose outcome is unknown (a reply
 * lost, a request abandoned), and what a read of every key says of each.
 * A transaction is atomic: it was applied to every key or to none. So a
 * read that shows every key with the attempt's RVN under our owner name
 * means the group is ours; one that shows some means it was applied and
 * someone took some of its locks over since; none tells nothing, and the
 * attempt stays remembered.
 */
import type { LockObservation } from '../dynamodb/read-lock.js';
import type { GroupMember, LockItem } from '../protocol/index.js';
import type { Acquisition } from './steps.js';

/** One transaction sent for the group. */
export interface GroupAttempt {
  readonly members: readonly GroupMember[];
  /** Monotonic time when the transaction first left this client (dynamodb/departure.ts). */
  readonly lookupTime: number;
  readonly lookupWallTime: number | undefined;
  /** With fencing: each member's token, known before the transaction was sent. */
  readonly tokens: readonly (bigint | undefined)[];
}

export type AttemptReading =
  /** Every key carries the attempt's RVNs: the group is ours. */
  | { readonly kind: 'ours' }
  /** The attempt was applied, and someone took over the other keys since: `ours` are the indexes still ours. */
  | { readonly kind: 'overtaken'; readonly ours: readonly number[] }
  /** No key carries it: not applied, or applied and every lock taken over since. */
  | { readonly kind: 'unseen' };

/** What `seen` (one observation per member, in order) says of `attempt`. */
export function readAttempt(attempt: GroupAttempt, seen: readonly (LockObservation | undefined)[], ownerName: string): AttemptReading {
  const ours = attempt.members.flatMap(({ record }, i) => {
    const found = seen[i]?.record;
    const carries =
      found !== undefined && !found.isReleased && found.ownerName === ownerName && found.recordVersionNumber === record.recordVersionNumber;
    return carries ? [i] : [];
  });
  if (ours.length === attempt.members.length) return { kind: 'ours' };
  return ours.length === 0 ? { kind: 'unseen' } : { kind: 'overtaken', ours };
}

/** Each member of `attempt` as an acquisition, its lease counted from the attempt's departure. */
export function acquisitionsOf(attempt: GroupAttempt, additionalAttributes: LockItem): Acquisition[] {
  return attempt.members.map(({ record }, i) => ({
    record,
    lookupTime: attempt.lookupTime,
    lookupWallTime: attempt.lookupWallTime,
    additionalAttributes,
    fencingToken: attempt.tokens[i],
  }));
}
