/**
 * Judges a chaos run's log: mutual exclusion of the checked critical
 * sections, and how long a key stayed unavailable after its holder was
 * killed or paused; in `--groups` runs, that every group was held whole
 * (group-check.ts); in `--semaphores` runs, that no semaphore ever had more
 * holders than permits (semaphore-check.ts); in `--gc` runs, that the gc
 * deleted no item a worker still held (gc-check.ts). Pure: events in,
 * report out.
 */
import type { ChaosEvent } from './events.js';
import { checkGc, type GcCheckReport } from './gc-check.js';
import { checkGroups, type GroupCheckReport } from './group-check.js';
import { pausedWithin, pausesByWorker } from './pauses.js';
import { checkSemaphores, semaphoreOfKey, semaphoresOf, type SemaphoreCheckReport } from './semaphore-check.js';

export interface CheckOptions {
  readonly leaseMs: number;
  readonly pollMs: number;
  /** Allowance beyond lease + poll for a takeover (see RELIABILITY.md). */
  readonly marginMs: number;
  /** When the driver stopped: a key someone still asked for then counts as unavailable until here. */
  readonly endNs: bigint;
}

/** One hold: a worker's acquisition of a key, from acquireLock resolving to its last checked act. */
export interface Hold {
  readonly worker: string;
  readonly key: string;
  readonly rvn: string;
  readonly startNs: bigint;
  endNs: bigint;
  acts: number;
  /** Taken by acquireLocks with other keys. */
  readonly group: boolean;
}

export interface Overlap {
  readonly key: string;
  readonly first: { worker: string; rvn: string; startNs: string; endNs: string };
  readonly second: { worker: string; rvn: string; startNs: string; endNs: string };
  readonly overlapMs: number;
}

export interface Unavailability {
  readonly key: string;
  /** The worker killed or paused while holding `key`. */
  readonly worker: string;
  readonly fault: 'kill' | 'stop';
  /**
   * From the fault (or, if later, from when the next holder started asking) to
   * the next acquisition, less the time the driver kept that next holder paused.
   */
  readonly ms: number;
  /** False when nobody acquired the key again before the run ended. */
  readonly reacquired: boolean;
  /**
   * The next holder took the key in a group: it waited until every key of
   * its group was free at once, which the bound for one key does not model.
   */
  readonly byGroup?: true;
}

export interface CheckReport extends GroupCheckReport, SemaphoreCheckReport, GcCheckReport {
  readonly acquisitions: number;
  readonly acts: number;
  readonly lossesByKind: Record<string, number>;
  readonly processFaults: { kill: number; stop: number; restart: number };
  readonly overlaps: Overlap[];
  readonly takeovers: number;
  readonly maxUnavailableMs: number;
  readonly unavailableBoundMs: number;
  readonly worstUnavailability: Unavailability | undefined;
  readonly slowTakeovers: Unavailability[];
}

const ms = (ns: bigint): number => Number(ns / 1_000n) / 1_000;

export function checkChaosLog(events: readonly ChaosEvent[], options: CheckOptions): CheckReport {
  const holds = new Map<string, Hold>(); // by worker + RVN
  const lossesByKind: Record<string, number> = {};
  const processFaults = { kill: 0, stop: 0, restart: 0 };
  const faults: { worker: string; fault: 'kill' | 'stop'; atNs: bigint }[] = [];
  /** When each hold ended by release or loss (a hold not ended before a fault was held through it). */
  const endedAt = new Map<string, bigint>();
  /** When each acquisition's caller started asking for the key, by worker + RVN. */
  const askedAt = new Map<string, bigint>();
  const asking = new Map<string, bigint>(); // by worker + key: the latest acquireLock call
  /** Every acquireLock call, by key and by worker, in log order: who asked for a key that nobody got again, and until when. */
  const asksByKey = new Map<string, { worker: string; atNs: bigint }[]>();
  const asksByWorker = new Map<string, bigint[]>();
  const killsByWorker = new Map<string, bigint[]>();
  const pauses = pausesByWorker(events, options.endNs);
  let acts = 0;
  const startHold = (worker: string, key: string, rvn: string, atNs: string, group: boolean): void => {
    const asked = asking.get(`${worker} ${key}`);
    if (asked !== undefined) askedAt.set(`${worker} ${rvn}`, asked);
    holds.set(`${worker} ${rvn}`, { worker, key, rvn, startNs: BigInt(atNs), endNs: BigInt(atNs), acts: 0, group });
  };
  /** An act's check vouches for the hold up to its instant. */
  const checkedHold = (worker: string, rvn: string, checkedAtNs: string, event: ChaosEvent): void => {
    const hold = holds.get(`${worker} ${rvn}`);
    if (hold === undefined) throw new Error(`act without its acquisition: ${JSON.stringify(event)}`);
    const at = BigInt(checkedAtNs);
    if (at > hold.endNs) hold.endNs = at;
    hold.acts++;
  };

  for (const event of events) {
    switch (event.type) {
      case 'wanting': {
        asking.set(`${event.worker} ${event.key}`, BigInt(event.atNs));
        const asks = asksByKey.get(event.key) ?? [];
        asks.push({ worker: event.worker, atNs: BigInt(event.atNs) });
        asksByKey.set(event.key, asks);
        // Appended in place: a load run logs hundreds of thousands of asks.
        const workerAsks = asksByWorker.get(event.worker) ?? [];
        workerAsks.push(BigInt(event.atNs));
        asksByWorker.set(event.worker, workerAsks);
        break;
      }
      // A group's ask is no ask for any one of its keys alone (see Unavailability.byGroup): only its start is kept.
      case 'groupWanting':
        for (const key of event.keys) asking.set(`${event.worker} ${key}`, BigInt(event.atNs));
        break;
      case 'acquired':
        startHold(event.worker, event.key, event.rvn, event.atNs, false);
        break;
      case 'groupAcquired':
      case 'permitsAcquired':
        for (const member of event.members) startHold(event.worker, member.key, member.rvn, event.atNs, event.type === 'groupAcquired');
        break;
      case 'act':
        acts++;
        checkedHold(event.worker, event.acquiredRvn, event.checkedAtNs, event);
        break;
      case 'groupAct':
        acts++;
        for (const rvn of event.acquiredRvns) checkedHold(event.worker, rvn, event.checkedAtNs, event);
        break;
      case 'lost':
        lossesByKind[event.kind] = (lossesByKind[event.kind] ?? 0) + 1;
        endedAt.set(`${event.worker} ${event.acquiredRvn}`, BigInt(event.atNs));
        break;
      case 'released':
        if (!endedAt.has(`${event.worker} ${event.acquiredRvn}`)) endedAt.set(`${event.worker} ${event.acquiredRvn}`, BigInt(event.atNs));
        break;
      case 'kill':
      case 'stop':
        processFaults[event.type]++;
        faults.push({ worker: event.worker, fault: event.type, atNs: BigInt(event.atNs) });
        if (event.type === 'kill') {
          const kills = killsByWorker.get(event.worker) ?? [];
          kills.push(BigInt(event.atNs));
          killsByWorker.set(event.worker, kills);
        }
        break;
      case 'start':
        if (!event.worker.endsWith('.1')) processFaults.restart++;
        break;
      case 'permitsWanting': // judged by semaphore-check.ts
      case 'gcDelete': // judged by gc-check.ts
      case 'gcPass':
      case 'cont': // read by pausesByWorker
      case 'write': // judged by fenced-check.ts
      case 'overdue': // judged by load-check.ts
      case 'tally':
      case 'stall':
      case 'heartbeatError':
      case 'lateHeartbeat':
        break;
    }
  }

  const byKey = new Map<string, Hold[]>();
  for (const hold of holds.values()) {
    const list = byKey.get(hold.key) ?? [];
    list.push(hold);
    byKey.set(hold.key, list);
  }
  // Only checked instants are judged: a hold in which no check ever passed (e.g. acquireLock
  // resolved after a SIGSTOP longer than the lease, and the first check found the lock lost)
  // never acted under the lock, so it cannot overlap anything.
  const actedHolds = new Map([...byKey].map(([key, list]) => [key, list.filter((hold) => hold.acts > 0)]));
  const overlaps: Overlap[] = [];
  const describe = (h: Hold) => ({ worker: h.worker, rvn: h.rvn, startNs: h.startNs.toString(), endNs: h.endNs.toString() });
  for (const [key, list] of actedHolds) {
    list.sort((a, b) => (a.startNs < b.startNs ? -1 : a.startNs > b.startNs ? 1 : 0));
    for (let i = 0; i < list.length; i++) {
      const first = list[i]!;
      // Intervals are sorted by start: only later holds starting before this one ends can intersect it.
      for (let j = i + 1; j < list.length && list[j]!.startNs <= first.endNs; j++) {
        const second = list[j]!;
        if (second.worker === first.worker) continue;
        const end = second.endNs < first.endNs ? second.endNs : first.endNs;
        overlaps.push({ key, first: describe(first), second: describe(second), overlapMs: ms(end - second.startNs) });
      }
    }
  }

  const unavailableBoundMs = options.leaseMs + options.pollMs + options.marginMs;
  const unavailabilities: Unavailability[] = [];
  // A semaphore's waiters take whichever permits are free: how soon one given permit is taken again measures no one's wait.
  const semaphores = semaphoresOf(events);
  for (const fault of faults) {
    for (const hold of holds.values()) {
      if (hold.worker !== fault.worker || hold.startNs > fault.atNs || semaphoreOfKey(hold.key, semaphores) !== undefined) continue;
      const ended = endedAt.get(`${hold.worker} ${hold.rvn}`);
      if (ended !== undefined && ended <= fault.atNs) continue;
      // Held through the fault: how long until anyone acquired that key again? Counted from the
      // fault, or from when the eventual acquirer started asking if that was later: nobody can be
      // handed a key before asking for it, and a newcomer's first read starts its own lease wait.
      let next: Hold | undefined;
      for (const other of byKey.get(hold.key) ?? []) {
        if (other.startNs > fault.atNs && (next === undefined || other.startNs < next.startNs)) next = other;
      }
      let from: bigint;
      let until: bigint;
      let paused: bigint;
      if (next !== undefined) {
        const asked = askedAt.get(`${next.worker} ${next.rvn}`);
        from = asked !== undefined && asked > fault.atNs ? asked : fault.atNs;
        until = next.startNs;
        // A waiter the driver paused cannot take anything over: its paused time is not the lock's delay.
        paused = pausedWithin(pauses.get(next.worker) ?? [], from, until);
      } else {
        // Nobody held the key again. It was unavailable only to those who asked for it after the
        // fault, each from its ask until it gave up (its next ask, for any key), was killed, or the
        // run ended: the longest such wait counts.
        const waits = (asksByKey.get(hold.key) ?? [])
          .filter((ask) => ask.atNs > fault.atNs && ask.worker !== fault.worker)
          .map((ask) => {
            const after = (times: readonly bigint[] | undefined): bigint => (times ?? []).find((at) => at > ask.atNs) ?? options.endNs;
            const end = [after(asksByWorker.get(ask.worker)), after(killsByWorker.get(ask.worker)), options.endNs].reduce((a, b) =>
              b < a ? b : a,
            );
            return { from: ask.atNs, until: end, paused: pausedWithin(pauses.get(ask.worker) ?? [], ask.atNs, end) };
          });
        const longest = waits.reduce<(typeof waits)[number] | undefined>(
          (w, x) => (w === undefined || x.until - x.from - x.paused > w.until - w.from - w.paused ? x : w),
          undefined,
        );
        if (longest === undefined) continue;
        ({ from, until, paused } = longest);
      }
      unavailabilities.push({
        key: hold.key,
        worker: fault.worker,
        fault: fault.fault,
        ms: ms(until - from - paused),
        reacquired: next !== undefined,
        ...(next?.group === true ? { byGroup: true as const } : {}),
      });
    }
  }
  const slowTakeovers = unavailabilities.filter((u) => u.ms > unavailableBoundMs);
  const worst = unavailabilities.reduce<Unavailability | undefined>((w, u) => (w === undefined || u.ms > w.ms ? u : w), undefined);

  const vouched = [...actedHolds.values()].flat();
  return {
    ...checkGroups(events),
    ...checkSemaphores(events, vouched),
    ...checkGc(events, vouched),
    acquisitions: holds.size,
    acts,
    lossesByKind,
    processFaults,
    overlaps,
    takeovers: unavailabilities.filter((u) => u.reacquired).length,
    maxUnavailableMs: worst?.ms ?? 0,
    unavailableBoundMs,
    worstUnavailability: worst,
    slowTakeovers,
  };
}
