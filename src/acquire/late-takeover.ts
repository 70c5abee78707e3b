/**
 * The one takeover an acquisition may still send once its wait has run out.
 *
 * With no wait, the deadline falls at the takeover instant: a failed poll
 * handled in that moment, or a stall of the process, would end the call
 * without the takeover of a holder that is dead by then. Java judges expiry
 * before its budget, so the call tries it then, once: only if every lock it
 * times has gone stale, it has sent no takeover yet (refused, failed, or won
 * and not renewed; of this RVN or an earlier one), and the cut-off instant
 * has not passed, since the cut-off would abort it in flight and leave its
 * outcome unknown. A single lock sends the takeover; a group, which reads
 * before it writes, reads once more.
 */
import type { AcquireDeadline } from './acquire-deadline.js';
import type { StaleWatch } from './stale-watch.js';

export class LateTakeover {
  /** Set by a takeover this call sent, or once the late attempt was claimed. */
  #spent = false;

  /** A takeover write of this call is going out: after it, the wait's end is final. */
  sent(): void {
    this.#spent = true;
  }

  /** Whether the late attempt is due now, the wait having run out; true only once. */
  claim(deadline: AcquireDeadline, watches: readonly StaleWatch[], now: number): boolean {
    if (this.#spent || deadline.beyondCutOff) return false;
    const timed = watches.filter((watch) => watch.observation !== undefined);
    if (timed.length === 0 || !timed.every((watch) => watch.isStale(now))) return false;
    this.#spent = true;
    return true;
  }
}
