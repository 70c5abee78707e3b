/**
 * Judges the semaphores of a `--semaphores` run: never more holders of a
 * semaphore's permits at one instant than it has permits, and every grant
 * the distinct permits asked for. A holder is a hold of any key of the form
 * `NAME#permit-…` (a semaphore worker's permit, or a single-key worker that
 * took a permit's key as a lock, as a client of another language joins),
 * counted from its grant to its last vouched check, exactly as the overlap
 * check counts a hold (checker.ts): a worker holding two permits is two
 * holders. Pure: events and holds in, report out.
 */
import { PERMIT_INFIX } from '../src/semaphore/permit-keys.js';
import type { ChaosEvent } from './events.js';

/** A hold as the checker built it: from its grant to its last vouched check. */
export interface VouchedHold {
  readonly worker: string;
  readonly key: string;
  readonly rvn: string;
  readonly startNs: bigint;
  readonly endNs: bigint;
}

/** An instant at which a semaphore had more holders than permits, with the holds then vouched for. */
export interface OverfullSemaphore {
  readonly semaphore: string;
  readonly permits: number;
  readonly holders: number;
  readonly atNs: string;
  readonly holds: readonly { readonly worker: string; readonly key: string; readonly rvn: string }[];
}

/** A grant that was not `count` distinct permits, 1 to N, of the semaphore asked for. */
export interface WrongGrant {
  readonly worker: string;
  readonly semaphore: string;
  readonly asked: number | undefined;
  readonly keys: readonly string[];
  readonly atNs: string;
}

export interface SemaphoreCheckReport {
  /** acquirePermit(s) calls made (a call not granted in time is made again). */
  readonly permitAsks: number;
  /** Calls granted, by how many permits each took. */
  readonly permitGrantsByCount: Record<number, number>;
  /** Permits granted in all. */
  readonly permitsGranted: number;
  /** The most holders each semaphore had at once. */
  readonly mostHolders: Record<string, number>;
  readonly overfull: OverfullSemaphore[];
  readonly wrongGrants: WrongGrant[];
}

/** The semaphore whose permit `key` is, among `permits` (name to N); undefined for another key. */
export function semaphoreOfKey(key: string, permits: ReadonlyMap<string, number>): string | undefined {
  const at = key.lastIndexOf(PERMIT_INFIX);
  if (at < 0) return undefined;
  const name = key.slice(0, at);
  return permits.has(name) ? name : undefined;
}

/** Each semaphore the log asked for, with its number of permits. */
export function semaphoresOf(events: readonly ChaosEvent[]): Map<string, number> {
  const permits = new Map<string, number>();
  for (const event of events) if (event.type === 'permitsWanting') permits.set(event.semaphore, event.permits);
  return permits;
}

export function checkSemaphores(events: readonly ChaosEvent[], vouched: Iterable<VouchedHold>): SemaphoreCheckReport {
  const permits = semaphoresOf(events);
  const asked = new Map<string, number>(); // by worker: the pending call's count
  const permitGrantsByCount: Record<number, number> = {};
  const wrongGrants: WrongGrant[] = [];
  let permitAsks = 0;
  let permitsGranted = 0;
  for (const event of events) {
    if (event.type === 'permitsWanting') {
      permitAsks++;
      asked.set(event.worker, event.count);
    } else if (event.type === 'permitsAcquired') {
      const keys = event.members.map((member) => member.key);
      const count = asked.get(event.worker);
      asked.delete(event.worker);
      permitGrantsByCount[keys.length] = (permitGrantsByCount[keys.length] ?? 0) + 1;
      permitsGranted += keys.length;
      if (!isGrantOf(event.semaphore, permits.get(event.semaphore) ?? 0, count, keys)) {
        wrongGrants.push({ worker: event.worker, semaphore: event.semaphore, asked: count, keys, atNs: event.atNs });
      }
    }
  }
  const holdsBySemaphore = new Map<string, VouchedHold[]>();
  for (const hold of vouched) {
    const semaphore = semaphoreOfKey(hold.key, permits);
    if (semaphore === undefined) continue;
    const list = holdsBySemaphore.get(semaphore) ?? [];
    list.push(hold);
    holdsBySemaphore.set(semaphore, list);
  }
  const mostHolders: Record<string, number> = {};
  const overfull: OverfullSemaphore[] = [];
  for (const [semaphore, holds] of holdsBySemaphore) {
    const sweep = sweepHolders(holds, permits.get(semaphore) ?? 0);
    mostHolders[semaphore] = sweep.most;
    overfull.push(...sweep.overfull.map((o) => ({ semaphore, permits: permits.get(semaphore) ?? 0, ...o })));
  }
  return { permitAsks, permitGrantsByCount, permitsGranted, mostHolders, overfull, wrongGrants };
}

function isGrantOf(semaphore: string, permits: number, count: number | undefined, keys: readonly string[]): boolean {
  const indices = keys.map((key) =>
    key.startsWith(`${semaphore}${PERMIT_INFIX}`) ? Number(key.slice(semaphore.length + PERMIT_INFIX.length)) : NaN,
  );
  const valid = indices.every((i) => Number.isSafeInteger(i) && i >= 1 && i <= permits);
  return valid && new Set(indices).size === keys.length && keys.length === count;
}

/**
 * The holders of one semaphore over time: holds are closed intervals, so at
 * one instant a start counts before an end (two holds touching at an instant
 * are both held then, as the overlap check has it). An overfull episode is
 * reported once, at the instant the holders first exceed the permits.
 */
function sweepHolders(
  holds: readonly VouchedHold[],
  permits: number,
): { most: number; overfull: Omit<OverfullSemaphore, 'semaphore' | 'permits'>[] } {
  const edges = holds.flatMap((hold) => [
    { atNs: hold.startNs, start: true, hold },
    { atNs: hold.endNs, start: false, hold },
  ]);
  edges.sort((a, b) => (a.atNs < b.atNs ? -1 : a.atNs > b.atNs ? 1 : Number(b.start) - Number(a.start)));
  const open = new Set<VouchedHold>();
  const overfull: Omit<OverfullSemaphore, 'semaphore' | 'permits'>[] = [];
  let most = 0;
  for (const edge of edges) {
    if (!edge.start) {
      open.delete(edge.hold);
      continue;
    }
    open.add(edge.hold);
    most = Math.max(most, open.size);
    if (open.size === permits + 1) {
      const holding = [...open].map(({ worker, key, rvn }) => ({ worker, key, rvn }));
      overfull.push({ holders: open.size, atNs: edge.atNs.toString(), holds: holding });
    }
  }
  return { most, overfull };
}
