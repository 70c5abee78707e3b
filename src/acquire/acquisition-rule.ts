/**
 * Java's decision on one lock (PROTOCOL.md §5.2), the one rule of every
 * acquisition: what to do next with a key, given what was read of it (or what
 * a refused write returned) and what the stale watch says. Both the single
 * loop (acquire-lock.ts) and the group loop (group-acquire.ts) ask it; each
 * keeps its own state (the watch, the deadline, the holder it names) and turns
 * the answer into requests and errors. Pure: it sends nothing and reads no
 * clock.
 */
import type { LockObservation } from '../dynamodb/read-lock.js';
import type { AcquisitionPath } from '../protocol/index.js';
import type { AcquireLockOptions } from './acquire-options.js';
import type { Watched } from './stale-watch.js';
import type { Acquisition, RefusedWrite } from './steps.js';

/** What the acquisition knows of one key at one moment. */
export interface Sight {
  /** The item as read, or as a refused write returned it; `undefined`: no item. */
  readonly existing: LockObservation | undefined;
  /** The write of this call, of unknown outcome, whose RVN the item carries under our owner name. */
  readonly ours?: Acquisition | undefined;
  /** The write DynamoDB just refused on this item: not sent again on the same item. */
  readonly refused?: RefusedWrite | undefined;
  /**
   * What the stale watch says of a held item once it has taken it in: the
   * observation whose RVN it times and whether that RVN has stood still for
   * its lease. With `shouldSkipBlockingWait`, what the observation cache (or
   * the clock bound) says of the item itself.
   */
  readonly watched?: Watched | undefined;
}

/** The options of a call that the rule follows. */
export type AcquisitionRules = Pick<
  AcquireLockOptions,
  'acquireOnlyIfLockAlreadyExists' | 'acquireReleasedLocksConsistently' | 'shouldSkipBlockingWait'
>;

/** What the acquisition does next about one key. */
export type Decision =
  /** The item is a write of this call whose outcome was unknown: it was applied, so the lock is ours. */
  | { readonly kind: 'ours'; readonly acquisition: Acquisition }
  /** Send this write, decided on `existing` (`undefined`: no item; a takeover: the timed observation). */
  | { readonly kind: 'write'; readonly path: AcquisitionPath; readonly existing: LockObservation | undefined }
  /** Someone holds it and its RVN has not yet stood still for its lease: wait. */
  | { readonly kind: 'wait' }
  /**
   * Not this time; a later observation may do before the deadline.
   * `no-item`: only an existing lock may be taken, and there is none;
   * `refused-again`: the write just refused on this very item.
   */
  | { readonly kind: 'retry'; readonly why: 'no-item' | 'refused-again' }
  /** `shouldSkipBlockingWait`, and someone holds it: the call ends. */
  | { readonly kind: 'unavailable' };

/** Java's decision on `sight`: the new-lock, released or expired path, ours already, or not now. */
export function decide(sight: Sight, rules: AcquisitionRules): Decision {
  const { existing, refused } = sight;
  if (existing === undefined) {
    if (rules.acquireOnlyIfLockAlreadyExists === true) return { kind: 'retry', why: 'no-item' };
    return writeUnlessRefused({ kind: 'absent' }, undefined, refused);
  }
  if (sight.ours !== undefined) return { kind: 'ours', acquisition: sight.ours };
  const { record } = existing;
  if (record.isReleased) {
    const readRecordVersionNumber = rules.acquireReleasedLocksConsistently === true ? record.recordVersionNumber : undefined;
    return writeUnlessRefused({ kind: 'released', readRecordVersionNumber }, existing, refused);
  }
  const watched = sight.watched;
  if (watched === undefined || !watched.stale) return rules.shouldSkipBlockingWait === true ? { kind: 'unavailable' } : { kind: 'wait' };
  const timed = watched.observation;
  return writeUnlessRefused({ kind: 'expired', watchedRecordVersionNumber: timed.record.recordVersionNumber }, timed, refused);
}

/** Whether `existing` shows the lock held under another owner name than `ownerName`: the call waits for another holder. */
export function heldByAnother(existing: LockObservation | undefined, ownerName: string): boolean {
  return existing !== undefined && !existing.record.isReleased && existing.record.ownerName !== ownerName;
}

function writeUnlessRefused(path: AcquisitionPath, existing: LockObservation | undefined, refused: RefusedWrite | undefined): Decision {
  if (refused !== undefined && refused.path === path.kind && refused.recordVersionNumber === existing?.record.recordVersionNumber) {
    // Trying again at once would only be refused again: wait for the next poll, as Java waits a refresh period.
    return { kind: 'retry', why: 'refused-again' };
  }
  return { kind: 'write', path, existing };
}
