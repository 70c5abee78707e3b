/** What an acquisition's loop (acquire-lock.ts) wins, does next, and comes to. */
import type { LockNotGrantedError } from '../base/errors.js';
import type { LockObservation } from '../dynamodb/read-lock.js';
import type { WonWrite } from '../hold/lock-state.js';
import type { AcquisitionPath } from '../protocol/index.js';

/** A successful acquisition write, handed to the held locks as it is. */
export interface Acquisition extends WonWrite {
  /** With fencing: the token this write gets if it commits, known before it is sent. */
  fencingToken?: bigint | undefined;
  /** A renewal of this write whose outcome is unknown: the table may hold its RVN instead. */
  readonly inDoubt?: Acquisition | undefined;
}

/** What the renewal of a won lock whose reply came late (late-reply.ts) came to. */
export type Renewal =
  /** Confirmed: the lock goes on from the renewal. */
  | { readonly kind: 'renewed'; readonly acquisition: Acquisition }
  /** Failed without being refused: the lock is still the won write (with the renewal in doubt, if it may have been applied). */
  | { readonly kind: 'kept'; readonly acquisition: Acquisition }
  /** Refused: someone else's item is there now, shown by `error`. */
  | { readonly kind: 'refused'; readonly error: unknown };

/** A write DynamoDB just refused, and the RVN of the item it was decided on. */
export interface RefusedWrite {
  readonly path: AcquisitionPath['kind'];
  readonly recordVersionNumber: string | undefined;
}

/** What the loop acts on next. */
export type Step =
  /** The first attempt: the new-lock write, no read before it (PROTOCOL.md §9.2 item 1). */
  | { readonly kind: 'create' }
  /** A consistent read of our own, then Java's decision. */
  | { readonly kind: 'read' }
  /** Java's decision on what a poll, or a refused write's ALL_OLD item, showed (`undefined`: no item). */
  | {
      readonly kind: 'decide';
      readonly observation: LockObservation | undefined;
      readonly at: number;
      readonly refused?: RefusedWrite | undefined;
    }
  /** The timed RVN has been unchanged for its lease: write the takeover now, without a read. */
  | { readonly kind: 'takeover' }
  /** A poll failed; handled like a failed read of our own. */
  | { readonly kind: 'failed'; readonly error: unknown };

/** What one step came to. */
export type Outcome =
  | { readonly kind: 'won'; readonly acquisition: Acquisition }
  /** Go on with `step` at once: what the new-lock write's refusal showed is the first read. */
  | { readonly kind: 'again'; readonly step: Step }
  /**
   * Not taken this time. Past the deadline the call ends with `refusal` (or
   * the plain "not acquired"); before it, it goes on with `following`, or
   * waits for the next poll.
   */
  | { readonly kind: 'not-taken'; readonly refusal?: LockNotGrantedError | undefined; readonly following?: Step | undefined };

/** Thrown inside one step when that attempt failed but a later one may succeed before the deadline. */
export class RetryableRefusal extends Error {
  constructor(readonly refusal: LockNotGrantedError) {
    super(refusal.message);
  }
}

/** The write a decision on `existing` would send, if any, named for telling what a refusal refused. */
export function intendedWrite(existing: LockObservation | undefined): RefusedWrite {
  if (existing === undefined) return { path: 'absent', recordVersionNumber: undefined };
  return { path: existing.record.isReleased ? 'released' : 'expired', recordVersionNumber: existing.record.recordVersionNumber };
}
