/**
 * A held lock's writes whose outcome is unknown (a reply lost, a request cut
 * off): the table may hold any of their RVNs, and the earliest safe time any
 * of them allows bounds the lock's. Made only when a lock has such a write:
 * most never do.
 */
import type { LockWrite } from './lock-state.js';

/** Conditions have an operator limit: only the newest few RVNs are kept. */
const MAX_UNCERTAIN_RVNS = 8;

export class UncertainWrites {
  readonly recordVersionNumbers: string[] = [];
  /** The earliest safe time any of these writes allows, had it been applied; Infinity when none shortened it. */
  safeUntil = Infinity;

  /**
   * Adds a write. Dropping an old RVN can at worst give up a lock this client
   * still holds (it then lapses), never let two clients hold it; the safe
   * time of a dropped one still counts. Only a write that shortened the
   * lease (below `leaseInForceMs`) can end the safe time sooner: one sent
   * later with the same or a longer lease would end it later. (That also
   * leaves Java's `holdLockOnServiceUnavailable` its meaning.)
   */
  add(write: LockWrite, leaseInForceMs: number, marginFor: (leaseDurationMs: number) => number): void {
    this.recordVersionNumbers.push(write.recordVersionNumber);
    if (this.recordVersionNumbers.length > MAX_UNCERTAIN_RVNS) this.recordVersionNumbers.shift();
    if (write.leaseDurationMs < leaseInForceMs) {
      this.safeUntil = Math.min(this.safeUntil, write.sentAt + write.leaseDurationMs - marginFor(write.leaseDurationMs));
    }
  }
}
