/**
 * The fault schedule of a `--load` run: the seeded network faults of
 * fault-schedule.ts, and on top of them what a busy table meets in
 * production: throttling of the hot keys every worker wants, and now and
 * then a window in which the server is saturated (every request throttled).
 *
 * It remembers every fault it injected on a request (latency aside) with the
 * worker that sent it and the keys it named, and every saturation window, so
 * that a held lock lost to a fault on its own requests, or while the server
 * was saturated on purpose, can be told from one lost to the client's own
 * traffic (load-check.ts).
 */
import { dynamoDBErrorReply, type RequestFault, type RequestRule } from '../test-kit/fault-proxy.js';
import { seededFaultSchedule, type FaultSchedule } from './fault-schedule.js';
import { keysOf, namesOnlyHotKeys, senderOf } from './load-keys.js';
import { between, seededRandom } from './random.js';

/** Share of the requests naming only hot keys that are answered with DynamoDB's throttling error. */
const HOT_KEY_THROTTLE_ODDS = 0.2;
/** Seconds before the first saturation window, and between two windows. */
const FIRST_SATURATION_S: readonly [number, number] = [20, 40];
const SATURATION_GAP_S: readonly [number, number] = [45, 90];

/** A fault injected on one request: when, from which worker (its access key id), naming which keys. */
export interface InjectedFault {
  readonly atNs: bigint;
  readonly sender: string | undefined;
  readonly keys: readonly string[];
}

/** [fromNs, toNs): every request was throttled. */
export interface SaturationWindow {
  readonly fromNs: bigint;
  readonly toNs: bigint;
}

export interface LoadFaultCounts {
  readonly hotKeyThrottled: number;
  readonly saturationWindows: number;
  readonly saturatedRequests: number;
}

export interface LoadFaultSchedule extends FaultSchedule {
  readonly load: Readonly<LoadFaultCounts>;
  readonly injected: readonly InjectedFault[];
  /** The windows begun so far. */
  readonly windows: () => SaturationWindow[];
}

const THROTTLED: RequestFault = { action: 'respond', reply: dynamoDBErrorReply('ThrottlingException') };

/**
 * Saturation windows last from half a lease (heartbeats get through once it
 * ends) to two leases (held locks are lost): both must be told apart from
 * losses outside them. Starts from now.
 */
export function loadFaultSchedule(seed: number, leaseMs: number, seconds: number): LoadFaultSchedule {
  const base = seededFaultSchedule(seed);
  const random = seededRandom(seed ^ 0x5a5a5a5a);
  const startNs = process.hrtime.bigint();
  const planned: SaturationWindow[] = [];
  for (let at = between(random, ...FIRST_SATURATION_S) * 1_000; at < seconds * 1_000; at += between(random, ...SATURATION_GAP_S) * 1_000) {
    const fromNs = startNs + BigInt(at) * 1_000_000n;
    planned.push({ fromNs, toNs: fromNs + BigInt(between(random, Math.round(leaseMs / 2), 2 * leaseMs)) * 1_000_000n });
  }
  const load = { hotKeyThrottled: 0, saturationWindows: 0, saturatedRequests: 0 };
  const injected: InjectedFault[] = [];
  const seen = new Set<SaturationWindow>();
  const rule: RequestRule = (request) => {
    const now = process.hrtime.bigint();
    const keys = keysOf(request);
    const remember = (): void => void injected.push({ atNs: now, sender: senderOf(request), keys });
    const window = planned.find((w) => w.fromNs <= now && now < w.toNs);
    if (window !== undefined) {
      seen.add(window);
      load.saturationWindows = seen.size;
      load.saturatedRequests++;
      remember();
      return THROTTLED;
    }
    if (namesOnlyHotKeys(keys) && random() < HOT_KEY_THROTTLE_ODDS) {
      load.hotKeyThrottled++;
      remember();
      return THROTTLED;
    }
    const fault = base.rule(request);
    if (fault.action !== 'forward') remember();
    return fault;
  };
  return {
    rule,
    counts: base.counts,
    load,
    injected,
    windows: () => planned.filter((w) => seen.has(w)),
  };
}
