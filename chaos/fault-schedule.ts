/**
 * The seeded network fault schedule of the chaos run: a {@link RequestRule}
 * for the fault proxy that, per request, forwards it or injects one fault,
 * and counts what it injected by kind.
 */
import { dynamoDBErrorReply, type RequestFault, type RequestRule } from '../test-kit/fault-proxy.js';
import { between, seededRandom, type Random } from './random.js';

export type NetworkFaultKind =
  | 'latency'
  | 'dropRequest'
  | 'dropReply'
  | 'dropReplyThenThrottleRetries'
  | 'http500'
  | 'http503'
  | 'provisionedThroughputExceeded'
  | 'throttling';

/** Probability of each fault per request; the rest are forwarded at once. */
const FAULT_ODDS: ReadonlyArray<readonly [NetworkFaultKind, number]> = [
  ['latency', 0.08],
  ['dropRequest', 0.01],
  ['dropReply', 0.01],
  // The request is applied, its reply lost, and the SDK's retries of it throttled: only a refusal reaches the client.
  ['dropReplyThenThrottleRetries', 0.01],
  ['http500', 0.01],
  ['http503', 0.01],
  ['provisionedThroughputExceeded', 0.01],
  ['throttling', 0.01],
];

/** Latency range, ms: well under the lease, so a delayed heartbeat is late but not always fatal. */
const LATENCY_MS: readonly [number, number] = [20, 300];

export interface FaultSchedule {
  readonly rule: RequestRule;
  /** Faults injected so far, by kind. */
  readonly counts: Readonly<Record<NetworkFaultKind, number>>;
}

/** SDK calls (by `amz-sdk-invocation-id`) whose retries are throttled; the oldest are forgotten. */
const THROTTLED_CALLS_REMEMBERED = 1_000;

export function seededFaultSchedule(seed: number): FaultSchedule {
  const random: Random = seededRandom(seed);
  const counts = Object.fromEntries(FAULT_ODDS.map(([kind]) => [kind, 0])) as Record<NetworkFaultKind, number>;
  const throttledCalls = new Set<string>();
  const rule: RequestRule = (request) => {
    const invocation = request.headers['amz-sdk-invocation-id'];
    if (invocation !== undefined && throttledCalls.has(invocation)) return THROTTLED;
    let roll = random();
    for (const [kind, odds] of FAULT_ODDS) {
      if (roll < odds) {
        counts[kind]++;
        if (kind === 'dropReplyThenThrottleRetries' && invocation !== undefined) {
          throttledCalls.add(invocation);
          if (throttledCalls.size > THROTTLED_CALLS_REMEMBERED) throttledCalls.delete(throttledCalls.values().next().value as string);
        }
        return faultOf(kind, random);
      }
      roll -= odds;
    }
    return { action: 'forward' };
  };
  return { rule, counts };
}

const THROTTLED: RequestFault = { action: 'respond', reply: dynamoDBErrorReply('ThrottlingException') };

function faultOf(kind: NetworkFaultKind, random: Random): RequestFault {
  switch (kind) {
    case 'latency':
      return { action: 'forward', delayMs: between(random, ...LATENCY_MS) };
    case 'dropRequest':
      return { action: 'dropRequest' };
    case 'dropReply':
    case 'dropReplyThenThrottleRetries':
      return { action: 'dropReply' };
    case 'http500':
      return { action: 'respond', reply: dynamoDBErrorReply('InternalServerError') };
    case 'http503':
      return { action: 'respond', reply: dynamoDBErrorReply('ServiceUnavailable') };
    case 'provisionedThroughputExceeded':
      return { action: 'respond', reply: dynamoDBErrorReply('ProvisionedThroughputExceededException') };
    case 'throttling':
      return THROTTLED;
  }
}
