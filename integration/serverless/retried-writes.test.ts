/**
 * A lock bounded by its invocation, on the client README tells users to
 * build (the SDK's own retries on), behind a fault proxy: each first attempt
 * of a lock write is throttled and answered late, so the SDK sends the same
 * request again later. Every attempt must still state a lease that ends by
 * the deadline plus the kill overrun, counted from when that attempt left.
 */
import { describe, expect, it } from '@jest/globals';
import { useFaultBed } from '../../test-kit/jest/fault-bed.js';
import { FaultProxy, dynamoDBErrorReply, operationOf, type ProxiedRequest, type RequestFault } from '../../test-kit/fault-proxy.js';
import { abortOf } from '../../test-kit/jest/lock-events.js';

const faults = useFaultBed('bounded-retries');

/** A configured lease far longer than the invocation (margin 1 s): the bound decides every lease. */
const LEASE = 10_000;
/** Room for the acquisition and a heartbeat each retried after a late throttle and the SDK's backoff, on a busy machine. */
const REMAINING_MS = 7_000;
/** Longer than the acquisition's retried write takes, so that no late-reply renewal adds to it. */
const HEARTBEAT_MS = 2_000;
const KILL_OVERRUN_MS = 1_000;
/** How late the throttle of each first attempt is answered: the retry leaves at least this much after the lease was computed. */
const LATE_THROTTLE_MS = 400;
/** Between the lease stated as an attempt leaves the client and its arrival at the proxy. */
const TRANSIT_MS = 50;

const FORWARD: RequestFault = { action: 'forward' };
const LATE_THROTTLE: RequestFault = { action: 'respond', reply: dynamoDBErrorReply('ThrottlingException'), delayMs: LATE_THROTTLE_MS };

/** The lease a lock write states, read from its body as DynamoDB receives it. */
function statedLease(request: ProxiedRequest): number | undefined {
  const body = JSON.parse(request.body.toString('utf8')) as {
    Item?: Record<string, { S?: string }>;
    ExpressionAttributeValues?: Record<string, { S?: string }>;
  };
  const text = body.Item?.['leaseDuration']?.S ?? body.ExpressionAttributeValues?.[':ld']?.S;
  return text === undefined ? undefined : Number(text);
}

describe('a bounded lock whose writes the SDK retries', () => {
  it('states, on every attempt, a lease ending by the deadline plus the overrun counted from that attempt', async () => {
    const network = await faults.proxied('invocation', { sdkDefaults: true });
    const attempts: { at: number; attempt: number; leaseMs: number }[] = [];
    network.proxy.setRule((request) => {
      const leaseMs = ['PutItem', 'UpdateItem'].includes(operationOf(request) ?? '') ? statedLease(request) : undefined;
      if (leaseMs === undefined) return FORWARD;
      const attempt = FaultProxy.attemptOf(request);
      attempts.push({ at: performance.now(), attempt, leaseMs });
      return attempt === 1 ? LATE_THROTTLE : FORWARD;
    });
    const client = faults.bed.client({ ownerName: 'invocation', leaseDuration: LEASE, heartbeatPeriod: HEARTBEAT_MS }, network.dynamoDB);
    const deadline = performance.now() + REMAINING_MS;
    const lock = await client.acquireLock('job', { invocationDeadline: { at: deadline, killOverrunMs: KILL_OVERRUN_MS } });
    const lost = await abortOf(lock.signal, REMAINING_MS + 3_000);
    expect(lost.reason).toMatchObject({ kind: 'deadline' });
    // The acquisition and at least one heartbeat were each retried after a late throttle.
    expect(attempts.filter(({ attempt }) => attempt > 1).length).toBeGreaterThanOrEqual(2);
    for (const { at, leaseMs } of attempts) expect(at + leaseMs).toBeLessThanOrEqual(deadline + KILL_OVERRUN_MS + TRANSIT_MS);
  }, 20_000);
});
