/**
 * One waiting round's judgement of a semaphore's permits, as read: which
 * are free, which are held by a holder that stopped (its RVN unchanged for
 * its whole lease on this process's monotonic clock, the rule any waiter
 * follows), and whether the clients of the semaphore disagree on its
 * number of permits. Pure: it sends nothing.
 */
import type { LockHolder } from '../base/errors.js';
import type { LockKey } from '../base/lock-key.js';
import type { LockObservation } from '../dynamodb/read-lock.js';
import type { StaleWatch } from '../acquire/stale-watch.js';
import { holderOf } from '../protocol/lock-holder.js';
import { permitsWrittenOn } from './permit-keys.js';
import { SemaphorePermitsMismatchError } from './permits-mismatch-error.js';

/** What a round read: permits 1 to N, then the one past the last. */
export interface RoundReading {
  readonly permits: number;
  readonly keys: readonly LockKey[];
  readonly seen: readonly (LockObservation | undefined)[];
  /** One stale timer per permit, kept from round to round. */
  readonly watches: readonly StaleWatch[];
  /** Whether this client holds permit `index` (counted as taken, never recovered). */
  readonly heldHere: (index: number) => boolean;
  readonly now: number;
}

export interface RoundView {
  /** Permits nobody holds (no item, or released), by index. */
  readonly free: readonly number[];
  /** Permits whose holder stopped, with the RVN that stood still, by index. */
  readonly stale: readonly { readonly index: number; readonly observation: LockObservation }[];
  /** When the next held permit turns stale; `Infinity` when none is timed. */
  readonly nextStaleAt: number;
  /** The longest lease a holder advertised; 0 when none was seen. */
  readonly longestLease: number;
  /** A holder seen, for the error of a call that ends without a permit. */
  readonly holder: LockHolder | undefined;
}

/** @throws SemaphorePermitsMismatchError when a held permit shows another number of permits, or the one past the last is held. */
export function judgeRound(reading: RoundReading): RoundView {
  const { permits, seen, watches, heldHere, now } = reading;
  checkAgreement(reading);
  const free: number[] = [];
  const stale: { index: number; observation: LockObservation }[] = [];
  let nextStaleAt = Infinity;
  let longestLease = 0;
  let holder: LockHolder | undefined;
  for (let index = 0; index < permits; index++) {
    const existing = seen[index];
    const watch = watches[index] as StaleWatch;
    if (heldHere(index)) {
      // Ours: taken, never timed or recovered.
      watch.forget();
      if (existing !== undefined && !existing.record.isReleased) longestLease = Math.max(longestLease, existing.record.leaseDurationMs);
      continue;
    }
    const watched = watch.take(existing, now);
    if (watched === undefined) {
      free.push(index);
      continue;
    }
    longestLease = Math.max(longestLease, watched.observation.record.leaseDurationMs);
    holder ??= holderOf(watched.observation.record);
    if (watched.stale) stale.push({ index, observation: watched.observation });
    else nextStaleAt = Math.min(nextStaleAt, watch.takeoverAt());
  }
  return { free, stale, nextStaleAt, longestLease, holder };
}

function checkAgreement({ permits, keys, seen }: RoundReading): void {
  for (const [index, existing] of seen.entries()) {
    if (existing === undefined || existing.record.isReleased) continue;
    const written = permitsWrittenOn(existing.record);
    const past = index >= permits;
    if (past || (written !== undefined && written !== permits)) {
      throw new SemaphorePermitsMismatchError(permits, keys[index] as LockKey, written);
    }
  }
}
