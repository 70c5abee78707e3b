/**
 * The verdict of a `--load` run beyond the checker's: held locks lost, each
 * sorted by why it may have been lost, and acquisition calls that outlived
 * their bound. Pure: events and the schedule's record in, report out.
 *
 * A loss at T is provoked when, within the lock's lease plus the margin
 * before T, the driver paused its worker (`paused`), the server was
 * saturated on purpose (`saturated`), a request of that worker naming that
 * lock waited at the server while the runner's probe found the server too
 * slow for heartbeats (`serverBusy`, server-probe.ts: the server busy
 * elsewhere in that time excuses nothing), the worker's event loop stood still
 * for a heartbeat period or more in all, or the runner's did, whose fault
 * proxy then passed no request on (`stalled`: the host was too busy to run
 * it, see stall-watch.ts), or the schedule faulted a request of that
 * worker naming that key (`requestFaulted`): throttled, 5xx, dropped.
 * Anything else, a heartbeat starved by the client's own traffic first
 * among them, is a loss outside the injected faults. (A killed worker
 * reports nothing: its locks are simply gone.)
 */
import type { ChaosEvent, LostEvent } from './events.js';
import type { InjectedFault, SaturationWindow } from './load-faults.js';
import { accessKeyOf } from './load-keys.js';
import { pausedWithin, pausesByWorker, type Pause } from './pauses.js';

export interface LoadCheckOptions {
  readonly leaseMs: number;
  readonly heartbeatMs: number;
  readonly marginMs: number;
  readonly endNs: bigint;
  readonly injected: readonly InjectedFault[];
  readonly windows: readonly SaturationWindow[];
  /** Windows in which the server was slow to answer the runner's probe. */
  readonly busy: readonly SaturationWindow[];
  /** Requests the server was slow to start answering, as the proxy timed them (none without a proxy). */
  readonly slowReplies?: readonly SlowReply[];
}

export type Provocation = 'paused' | 'saturated' | 'serverBusy' | 'stalled' | 'requestFaulted';

export interface HeldLocksLost {
  readonly total: number;
  /** By the `kind` of the lock's `lost` event: expired, taken, deleted, released. */
  readonly byKind: Record<string, number>;
  /** Losses the run provoked, by kind and by the first provocation found. */
  readonly provoked: { readonly total: number; readonly byKind: Record<string, number>; readonly byCause: Record<Provocation, number> };
  /** Losses outside every injected fault: none is allowed. */
  readonly unprovoked: { readonly total: number; readonly byKind: Record<string, number>; readonly first: UnprovokedLoss[] };
}

/**
 * A loss outside the faults, with the failed heartbeats of its lock before it
 * (`<error> at -<ms before the loss>`) and the requests naming it that the
 * server was slow to answer (`<ms> ms from -<ms before the loss>`, or
 * `unanswered after <ms> ms …` when the client gave up first): whether the
 * time went at the server or in the client.
 */
export interface UnprovokedLoss extends LostEvent {
  readonly heartbeatErrors: readonly string[];
  readonly slowServerReplies: readonly string[];
  /** The worker's heartbeats of any lock that left half a period late or more: how many, and the largest lag. */
  readonly lateStarts: { readonly count: number; readonly maxLagMs: number };
  /** How long the runner's event loop, and with it the fault proxy, stood still. */
  readonly proxyStalledMs: number;
}

/** A request of `sender` naming `keys`, passed to the server at `atNs`, whose reply started `ms` later. */
export interface SlowReply extends InjectedFault {
  readonly ms: number;
  /** False when the client closed the connection before the server's reply began. */
  readonly answered: boolean;
}

export interface OverdueAcquisition {
  readonly worker: string;
  readonly key: string;
  /** How long the call had run, the worker's pauses taken out, when last seen. */
  readonly ms: number;
  readonly boundMs: number;
  readonly settled: boolean;
}

export interface LoadCheckReport {
  readonly heldLocksLost: HeldLocksLost;
  readonly acquisitionsOverdue: number;
  readonly worstOverdue: OverdueAcquisition | undefined;
  /** Acquisition calls of every worker incarnation, by how they ended (each incarnation's last tally). */
  readonly acquisitionCalls: {
    readonly calls: number;
    readonly granted: number;
    readonly refused: number;
    readonly failed: Record<string, number>;
  };
}

/** How many unprovoked losses the report lists in full. */
const LISTED = 5;

/** The `worker` of the runner's own stall events: its fault proxy passes every worker's requests on. */
export const PROXY_STALLS = 'proxy';

const ms = (ns: bigint): number => Number(ns / 1_000n) / 1_000;
const add = (counts: Record<string, number>, name: string, n = 1): void => void (counts[name] = (counts[name] ?? 0) + n);

export function checkLoad(events: readonly ChaosEvent[], options: LoadCheckOptions): LoadCheckReport {
  const pauses = pausesByWorker(events, options.endNs);
  const stalls = new Map<string, Pause[]>();
  for (const event of events) {
    if (event.type !== 'stall') continue;
    const list = stalls.get(event.worker) ?? [];
    list.push({ from: BigInt(event.fromNs), to: BigInt(event.toNs) });
    stalls.set(event.worker, list);
  }
  const stallNs = BigInt(options.heartbeatMs) * 1_000_000n;
  const reachNs = BigInt(options.leaseMs + options.marginMs) * 1_000_000n;
  const heartbeatErrors = new Map<string, { atNs: bigint; error: string }[]>(); // by worker + key
  for (const event of events) {
    if (event.type !== 'heartbeatError') continue;
    const id = `${event.worker} ${event.key}`;
    const list = heartbeatErrors.get(id) ?? [];
    list.push({ atNs: BigInt(event.atNs), error: event.error });
    heartbeatErrors.set(id, list);
  }
  const lateStarts = new Map<string, { atNs: bigint; lagMs: number }[]>(); // by worker
  for (const event of events) {
    if (event.type !== 'lateHeartbeat') continue;
    const list = lateStarts.get(event.worker) ?? [];
    list.push({ atNs: BigInt(event.atNs), lagMs: event.lagMs });
    lateStarts.set(event.worker, list);
  }
  const startedLateBefore = (loss: LostEvent): UnprovokedLoss['lateStarts'] => {
    const at = BigInt(loss.atNs);
    const within = (lateStarts.get(loss.worker) ?? []).filter((e) => e.atNs <= at && at - e.atNs <= reachNs);
    return { count: within.length, maxLagMs: Math.round(Math.max(0, ...within.map((e) => e.lagMs))) };
  };
  const failedBefore = (loss: LostEvent): string[] => {
    const at = BigInt(loss.atNs);
    return (heartbeatErrors.get(`${loss.worker} ${loss.key}`) ?? [])
      .filter((e) => e.atNs <= at && at - e.atNs <= reachNs)
      .map((e) => `${e.error} at -${Math.round(ms(at - e.atNs))}`);
  };
  /** The requests of the loss's worker naming its lock, within reach before it, that the server was slow to answer. */
  const slowRepliesTo = (loss: LostEvent): SlowReply[] => {
    const at = BigInt(loss.atNs);
    const sender = accessKeyOf(loss.worker);
    return (options.slowReplies ?? []).filter(
      (reply) => reply.sender === sender && reply.keys.includes(loss.key) && reply.atNs <= at && at - reply.atNs <= reachNs,
    );
  };
  /** Whether one of them waited at the server while the probe found the server too slow for heartbeats. */
  const stuckAtBusyServer = (loss: LostEvent): boolean =>
    slowRepliesTo(loss).some((reply) => {
      const answeredAt = reply.atNs + BigInt(Math.round(reply.ms * 1e6));
      return options.busy.some((w) => w.fromNs < answeredAt && w.toNs > reply.atNs);
    });
  const slowRepliesBefore = (loss: LostEvent): string[] => {
    const at = BigInt(loss.atNs);
    return slowRepliesTo(loss).map(
      (reply) => `${reply.answered ? '' : 'unanswered after '}${Math.round(reply.ms)} ms from -${Math.round(ms(at - reply.atNs))}`,
    );
  };
  const faultsOf = new Map<string, bigint[]>(); // by sender + key
  for (const fault of options.injected) {
    for (const key of fault.keys) {
      const id = `${fault.sender} ${key}`;
      const list = faultsOf.get(id) ?? [];
      list.push(fault.atNs);
      faultsOf.set(id, list);
    }
  }
  const provocationOf = (loss: LostEvent): Provocation | undefined => {
    const at = BigInt(loss.atNs);
    const from = at - reachNs;
    if (pausedWithin(pauses.get(loss.worker) ?? [], from, at) > 0n) return 'paused';
    if (options.windows.some((w) => w.fromNs < at && w.toNs > from)) return 'saturated';
    if (stuckAtBusyServer(loss)) return 'serverBusy';
    if (pausedWithin(stalls.get(loss.worker) ?? [], from, at) >= stallNs) return 'stalled';
    if (pausedWithin(stalls.get(PROXY_STALLS) ?? [], from, at) >= stallNs) return 'stalled';
    if ((faultsOf.get(`${accessKeyOf(loss.worker)} ${loss.key}`) ?? []).some((t) => t >= from && t <= at)) return 'requestFaulted';
    return undefined;
  };

  const byKind: Record<string, number> = {};
  const provoked = {
    total: 0,
    byKind: {} as Record<string, number>,
    byCause: { paused: 0, saturated: 0, serverBusy: 0, stalled: 0, requestFaulted: 0 },
  };
  const unprovoked = { total: 0, byKind: {} as Record<string, number>, first: [] as UnprovokedLoss[] };
  const overdue = new Map<string, OverdueAcquisition>(); // by worker, key and start: the latest sighting
  const tallies = new Map<string, Extract<ChaosEvent, { type: 'tally' }>>();
  for (const event of events) {
    if (event.type === 'lost') {
      add(byKind, event.kind);
      const cause = provocationOf(event);
      if (cause === undefined) {
        unprovoked.total++;
        add(unprovoked.byKind, event.kind);
        if (unprovoked.first.length < LISTED)
          unprovoked.first.push({
            ...event,
            heartbeatErrors: failedBefore(event),
            slowServerReplies: slowRepliesBefore(event),
            lateStarts: startedLateBefore(event),
            proxyStalledMs: Math.round(ms(pausedWithin(stalls.get(PROXY_STALLS) ?? [], BigInt(event.atNs) - reachNs, BigInt(event.atNs)))),
          });
      } else {
        provoked.total++;
        add(provoked.byKind, event.kind);
        provoked.byCause[cause]++;
      }
    } else if (event.type === 'overdue') {
      const start = BigInt(event.startNs);
      const at = BigInt(event.atNs);
      const ran = ms(at - start - pausedWithin(pauses.get(event.worker) ?? [], start, at));
      const call = `${event.worker} ${event.key} ${event.startNs}`;
      if ((overdue.get(call)?.ms ?? -1) < ran)
        overdue.set(call, { worker: event.worker, key: event.key, ms: ran, boundMs: event.boundMs, settled: event.settled });
    } else if (event.type === 'tally') {
      tallies.set(event.worker, event);
    }
  }
  const late = [...overdue.values()].filter((o) => o.ms > o.boundMs);
  const calls = { calls: 0, granted: 0, refused: 0, failed: {} as Record<string, number> };
  for (const tally of tallies.values()) {
    calls.calls += tally.calls;
    calls.granted += tally.granted;
    calls.refused += tally.refused;
    for (const [name, n] of Object.entries(tally.failed)) add(calls.failed, name, n);
  }
  return {
    heldLocksLost: { total: provoked.total + unprovoked.total, byKind, provoked, unprovoked },
    acquisitionsOverdue: late.length,
    worstOverdue: late.reduce<OverdueAcquisition | undefined>(
      (w, o) => (w === undefined || o.ms - o.boundMs > w.ms - w.boundMs ? o : w),
      undefined,
    ),
    acquisitionCalls: calls,
  };
}
