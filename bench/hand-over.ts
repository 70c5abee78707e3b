/**
 * Hand-over times of the contention and semaphore benchmarks: how long a
 * lock, a permit, or a place on a counter item stood idle between the end
 * of one worker's critical section and the start of another's. Times are
 * on the wall clock the worker processes share
 * (`performance.timeOrigin + performance.now()`, comparable across the
 * processes of one machine), so a hand-over also counts the release call
 * and the grant's reply, as a waiting caller sees them.
 */
import { percentile } from './report.js';

/** A critical section on the shared wall clock, and the worker that ran it. */
export interface WorkerSection {
  readonly start: number;
  readonly end: number;
  readonly worker: number;
}

/**
 * Milliseconds from the end of each section on one lock to the start of
 * the next, where the next was another worker's (a worker taking its lock
 * again is no hand-over). `sections`: those of one lock, in order of start.
 */
export function lockHandOvers(sections: readonly WorkerSection[]): number[] {
  return sections.flatMap((section, i) => {
    const previous = sections[i - 1];
    return previous !== undefined && previous.worker !== section.worker ? [section.start - previous.end] : [];
  });
}

/** A change of a counter item, as the item numbered it, and the section it let in or closed. */
export interface CounterChange {
  /** The item's change number after this change: the changes applied in this order. */
  readonly change: number;
  /** The count of places taken after this change. */
  readonly count: number;
  /** `grant`: `at` is the start of the section the increment let in; `release`: the end of the section the decrement closed. */
  readonly kind: 'grant' | 'release';
  readonly at: number;
  readonly worker: number;
}

/**
 * Milliseconds from the end of a section whose release took a full count
 * of `permits` down by one to the start of the section of the next grant,
 * where that grant was another worker's. Only releases from full count:
 * then every taker is being refused, and the next grant is the one that
 * takes the place just freed, as the next holder of a lock does. A change
 * missing from the numbering (a grant whose section was not recorded)
 * leaves the release it follows unpaired.
 */
export function counterHandOvers(changes: readonly CounterChange[], permits: number): number[] {
  const handOvers: number[] = [];
  let freed: CounterChange | undefined;
  let previous: CounterChange | undefined;
  for (const change of [...changes].sort((a, b) => a.change - b.change)) {
    if (previous !== undefined && change.change !== previous.change + 1) freed = undefined;
    previous = change;
    if (change.kind === 'release') {
      if (change.count === permits - 1) freed = change;
    } else if (freed !== undefined) {
      if (change.worker !== freed.worker) handOvers.push(change.at - freed.at);
      freed = undefined;
    }
  }
  return handOvers;
}

/** The median of `handOvers`, or null when there were none. */
export function medianHandOverMs(handOvers: readonly number[]): number | null {
  return handOvers.length === 0
    ? null
    : percentile(
        [...handOvers].sort((a, b) => a - b),
        50,
      );
}
