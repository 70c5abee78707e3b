/**
 * When the driver kept each worker stopped (SIGSTOP until SIGCONT), read from
 * the chaos log: time a worker spent paused is no delay of the library's.
 */
import type { ChaosEvent } from './events.js';

/** One pause, [from, to) in monotonic nanoseconds; a pause not resumed lasts to the end of the run. */
export interface Pause {
  readonly from: bigint;
  to: bigint;
}

/** Each worker's pauses, in log order. */
export function pausesByWorker(events: readonly ChaosEvent[], endNs: bigint): Map<string, Pause[]> {
  const pauses = new Map<string, Pause[]>();
  for (const event of events) {
    if (event.type === 'stop') {
      const list = pauses.get(event.worker) ?? [];
      list.push({ from: BigInt(event.atNs), to: endNs });
      pauses.set(event.worker, list);
    } else if (event.type === 'cont') {
      const open = pauses.get(event.worker)?.at(-1);
      if (open !== undefined && open.to === endNs) open.to = BigInt(event.atNs);
    }
  }
  return pauses;
}

/** How much of [from, until) the worker spent paused. */
export function pausedWithin(pauses: readonly Pause[], from: bigint, until: bigint): bigint {
  let total = 0n;
  for (const pause of pauses) {
    const start = pause.from > from ? pause.from : from;
    const end = pause.to < until ? pause.to : until;
    if (end > start) total += end - start;
  }
  return total;
}
