/**
 * Judges the group workers of a `--groups` run: every group must be held
 * whole. A group is partial when acquireLocks resolved with other keys than
 * the worker asked for (a subset, say), or when an act went ahead having
 * checked only some of its group's locks. Overlaps on each key are judged
 * with every other hold by the checker (checker.ts). The permits a
 * semaphore worker took together (`--semaphores`) are a group too: its acts
 * must check every one of them. Pure: events in, report out.
 */
import type { ChaosEvent } from './events.js';

export interface PartialGroup {
  readonly worker: string;
  /** `acquired`: the group's keys were not the keys asked for; `act`: an act checked other locks than its group's. */
  readonly at: 'acquired' | 'act';
  /** Keys for `acquired`, the acquisitions' RVNs for `act`, sorted. */
  readonly expected: readonly string[];
  readonly found: readonly string[];
  readonly atNs: string;
}

export interface GroupCheckReport {
  /** acquireLocks calls made (a call not granted in time is made again). */
  readonly groupAsks: number;
  /** Groups taken (each also counts its locks among the run's acquisitions). */
  readonly groupAcquisitions: number;
  readonly partialGroups: PartialGroup[];
}

const sorted = (items: readonly string[]): string[] => [...items].sort();
const same = (a: readonly string[], b: readonly string[]): boolean => a.length === b.length && a.every((item, i) => item === b[i]);

export function checkGroups(events: readonly ChaosEvent[]): GroupCheckReport {
  /** Each group worker's pending acquireLocks call: the keys it asked for. */
  const asked = new Map<string, string[]>();
  /** Every member's acquisition (worker + RVN) to its group's RVNs. */
  const groupOf = new Map<string, string[]>();
  const partialGroups: PartialGroup[] = [];
  const register = (worker: string, members: readonly { rvn: string }[]): void => {
    const rvns = sorted(members.map((member) => member.rvn));
    for (const rvn of rvns) groupOf.set(`${worker} ${rvn}`, rvns);
  };
  let groupAsks = 0;
  let groupAcquisitions = 0;
  for (const event of events) {
    switch (event.type) {
      case 'groupWanting':
        groupAsks++;
        asked.set(event.worker, sorted(event.keys));
        break;
      case 'groupAcquired': {
        groupAcquisitions++;
        const expected = asked.get(event.worker) ?? [];
        asked.delete(event.worker);
        const found = sorted(event.members.map((member) => member.key));
        if (!same(expected, found)) partialGroups.push({ worker: event.worker, at: 'acquired', expected, found, atNs: event.atNs });
        register(event.worker, event.members);
        break;
      }
      // Which permits a grant holds is judged by semaphore-check.ts; here, only that its acts check them all.
      case 'permitsAcquired':
        register(event.worker, event.members);
        break;
      case 'groupAct':
      case 'act': {
        const found = sorted(event.type === 'act' ? [event.acquiredRvn] : event.acquiredRvns);
        const group = groupOf.get(`${event.worker} ${found[0]}`);
        // A plain act on a lock no group took is a single-key worker's: nothing to judge here.
        if (event.type === 'act' && group === undefined) break;
        const expected = group ?? [];
        if (!same(expected, found)) partialGroups.push({ worker: event.worker, at: 'act', expected, found, atNs: event.checkedAtNs });
        break;
      }
      default:
        break;
    }
  }
  return { groupAsks, groupAcquisitions, partialGroups };
}
