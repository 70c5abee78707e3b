/** How a refused write of a held lock ends it: the item DynamoDB returned says who has it now. */
import { LockLostError, type LockHolder, type LockLossKind } from '../base/errors.js';
import { holderOf } from '../protocol/lock-holder.js';
import { decodeLockItem, type LockItem, type LockTable } from '../protocol/index.js';
import type { HeldLock } from './held-lock.js';

const REASONS: Record<Exclude<LockLossKind, 'expired' | 'handedOff' | 'deadline'>, string> = {
  deleted: 'its item was deleted',
  released: 'its item was marked released',
  taken: 'another client holds it',
};

/**
 * Ends the lock as lost after `what` (a heartbeat, a release, a guarded
 * write) failed its condition; `item` is the lock item as DynamoDB found it
 * (ALL_OLD), none when it was deleted. Returns the error that tells so,
 * even when the lock had ended already (its lease ran out while the write
 * was under way): the refusal is the news of who holds it now.
 */
export function loseByRefusal(table: LockTable, held: HeldLock, what: string, item: LockItem | undefined, error: unknown): LockLostError {
  let holder: LockHolder | undefined;
  try {
    holder = item === undefined ? undefined : holderOf(decodeLockItem(table, item));
  } catch {
    // An unreadable item still means the lock is not ours.
  }
  const kind = item === undefined ? 'deleted' : holder?.isReleased ? 'released' : 'taken';
  const lost = new LockLostError(kind, `${what}: ${REASONS[kind]}`, held, { cause: error, holder });
  held.loseWith(lost);
  return lost;
}

/**
 * Under overload a lock can reach the front of the queue with less safe time
 * than a request takes: its write would most likely be cut off unconfirmed,
 * and only take server capacity from locks that can still be kept. It is
 * given up then, while its holder can still be told in time; this says why.
 */
export function tooLateToHeartbeat(safeForMs: number, roundTripMs: number): string {
  return `its heartbeat could not be sent in time: ${Math.max(0, Math.round(safeForMs))} ms of safe time were left, and a heartbeat takes about ${Math.round(roundTripMs)} ms`;
}
