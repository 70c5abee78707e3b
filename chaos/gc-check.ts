/**
 * Judges the gc worker of a `--gc` run: `collectAbandoned` never deleted an
 * item whose hold a worker still vouched for. Pure: events and holds in,
 * report out.
 *
 * The rule. The gc worker logs each DeleteItem call, conditioned on an RVN
 * r, with the instant s before its first attempt. It sends one only after
 * two reads showed r unchanged for longer than r's lease, the second read
 * before s. A hold vouched for (an act checked) at or after s is judged:
 *
 * - acquired with r: a violation, whatever the delete's outcome. The holder
 *   wrote nothing that succeeded after r (its RVN stood still), so its lease
 *   ran out before s: a check passing at or after s means the gc judged a
 *   live holder stopped, or the lock vouched for itself past its lease.
 * - begun before s, with any RVN, when the delete succeeded: a violation.
 *   The item carried r from the gc's first read until the delete applied,
 *   at or after s; the hold held the key at s, so r was its RVN then (its
 *   acquisition's, or a heartbeat's), and its item was deleted under it.
 *   A delete that did not succeed may have met a heartbeat written after
 *   the second read: for it, only the first case is sure.
 *
 * A hold begun at or after s with another RVN took the key after the gc's
 * reads: the delete, conditioned on r, could not remove its item.
 */
import type { ChaosEvent } from './events.js';
import type { VouchedHold } from './semaphore-check.js';

/** A delete that took, or may have taken, the item of a hold vouched for afterwards. */
export interface HeldItemDeleted {
  readonly key: string;
  readonly rvn: string;
  readonly outcome: string;
  readonly sentAtNs: string;
  readonly hold: { readonly worker: string; readonly rvn: string; readonly startNs: string; readonly endNs: string };
}

export interface GcCheckReport {
  /** Passes that ended, and that failed (by error name). */
  readonly gcPasses: number;
  readonly gcPassErrors: Record<string, number>;
  /** DeleteItem calls sent, by outcome. */
  readonly gcDeletes: Record<string, number>;
  /** Items the passes reported left, by reason. */
  readonly gcLeft: Record<string, number>;
  readonly heldItemsDeleted: HeldItemDeleted[];
}

const add = (counts: Record<string, number>, key: string, n = 1): void => {
  counts[key] = (counts[key] ?? 0) + n;
};

export function checkGc(events: readonly ChaosEvent[], vouched: Iterable<VouchedHold>): GcCheckReport {
  const holdsByKey = new Map<string, VouchedHold[]>();
  for (const hold of vouched) {
    const list = holdsByKey.get(hold.key) ?? [];
    list.push(hold);
    holdsByKey.set(hold.key, list);
  }
  const gcPassErrors: Record<string, number> = {};
  const gcDeletes: Record<string, number> = {};
  const gcLeft: Record<string, number> = {};
  const heldItemsDeleted: HeldItemDeleted[] = [];
  let gcPasses = 0;
  for (const event of events) {
    if (event.type === 'gcPass') {
      if (event.error === undefined) gcPasses++;
      else add(gcPassErrors, event.error);
      for (const [reason, n] of Object.entries(event.left)) add(gcLeft, reason, n);
    }
    if (event.type !== 'gcDelete') continue;
    add(gcDeletes, event.outcome);
    const sentAt = BigInt(event.sentAtNs);
    for (const hold of holdsByKey.get(event.key) ?? []) {
      if (hold.endNs < sentAt) continue;
      if (hold.rvn !== event.rvn && !(event.outcome === 'deleted' && hold.startNs < sentAt)) continue;
      heldItemsDeleted.push({
        key: event.key,
        rvn: event.rvn,
        outcome: event.outcome,
        sentAtNs: event.sentAtNs,
        hold: { worker: hold.worker, rvn: hold.rvn, startNs: hold.startNs.toString(), endNs: hold.endNs.toString() },
      });
    }
  }
  return { gcPasses, gcPassErrors, gcDeletes, gcLeft, heldItemsDeleted };
}
