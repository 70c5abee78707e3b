/**
 * A lock bounded by its invocation, on the client README tells users to
 * build (the SDK's own retries on), behind a fault proxy: each first attempt
 * of a lock write is throttled and answered late, so the SDK sends the same
 * request again later. Every attempt must still state a lease that ends by
 * the deadline plus the kill overrun, counted from when that attempt left.
 * When it left is read on the client, as the signed attempt goes to the
 * socket: the proxy sees it later by however long a loaded machine's event
 * loop takes, which is not the library's doing.
 */
import type { DynamoDBClient } from '@aws-sdk/client-dynamodb';
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
/**
 * Between the library stating an attempt's lease and the signed attempt
 * leaving (signing, no I/O); far less than the late throttle, which a retry
 * stating its first attempt's lease would overrun by.
 */
const SIGNING_MS = 50;

const FORWARD: RequestFault = { action: 'forward' };
const LATE_THROTTLE: RequestFault = { action: 'respond', reply: dynamoDBErrorReply('ThrottlingException'), delayMs: LATE_THROTTLE_MS };

/** The lease a lock write states, read from its JSON body. */
function statedLease(text: string): number | undefined {
  const body = JSON.parse(text) as {
    Item?: Record<string, { S?: string }>;
    ExpressionAttributeValues?: Record<string, { S?: string }>;
  };
  const lease = body.Item?.['leaseDuration']?.S ?? body.ExpressionAttributeValues?.[':ld']?.S;
  return lease === undefined ? undefined : Number(lease);
}

const isLockWrite = (request: ProxiedRequest): boolean =>
  ['PutItem', 'UpdateItem'].includes(operationOf(request) ?? '') && statedLease(request.body.toString('utf8')) !== undefined;

interface Attempt {
  readonly at: number;
  readonly attempt: number;
  readonly leaseMs: number;
}

/**
 * Records each lock write's attempts as they leave the client: in the step
 * after the retry and signing, the SDK's last before the socket. A step, not
 * a place beside a named middleware, so that the heartbeats' lane, which
 * carries the user's own middleware, records its attempts too.
 */
function recordAttempts(dynamoDB: DynamoDBClient, attempts: Attempt[]): void {
  type Args = { readonly request?: { readonly body?: unknown; readonly headers?: Record<string, string> } };
  type Middleware = (next: (args: Args) => Promise<unknown>) => (args: Args) => Promise<unknown>;
  // The SDK's own middleware types name every step's arguments; this one reads only the request.
  const stack: object = dynamoDB.middlewareStack;
  (stack as { add(middleware: Middleware, options: object): void }).add(
    (next) => (args) => {
      const { body, headers = {} } = args.request ?? {};
      // Decoded, not converted: the SDK's byte body warns when its string methods are called.
      const text = typeof body === 'string' ? body : body instanceof Uint8Array ? new TextDecoder().decode(body) : undefined;
      const leaseMs = text === undefined ? undefined : statedLease(text);
      if (leaseMs !== undefined) {
        attempts.push({ at: performance.now(), attempt: FaultProxy.attemptOf({ headers }), leaseMs });
      }
      return next(args);
    },
    { step: 'deserialize', priority: 'low', name: 'recordLeaseAttempts' },
  );
}

describe('a bounded lock whose writes the SDK retries', () => {
  it('states, on every attempt, a lease ending by the deadline plus the overrun counted from that attempt', async () => {
    const network = await faults.proxied('invocation', { sdkDefaults: true });
    const attempts: Attempt[] = [];
    recordAttempts(network.dynamoDB, attempts);
    network.proxy.setRule((request) => (isLockWrite(request) && FaultProxy.attemptOf(request) === 1 ? LATE_THROTTLE : FORWARD));
    const client = faults.bed.client({ ownerName: 'invocation', leaseDuration: LEASE, heartbeatPeriod: HEARTBEAT_MS }, network.dynamoDB);
    const deadline = performance.now() + REMAINING_MS;
    const lock = await client.acquireLock('job', { invocationDeadline: { at: deadline, killOverrunMs: KILL_OVERRUN_MS } });
    const lost = await abortOf(lock.signal, REMAINING_MS + 3_000);
    expect(lost.reason).toMatchObject({ kind: 'deadline' });
    // The acquisition and at least one heartbeat were each retried after a late throttle.
    expect(attempts.filter(({ attempt }) => attempt > 1).length).toBeGreaterThanOrEqual(2);
    for (const { at, leaseMs } of attempts) expect(at + leaseMs).toBeLessThanOrEqual(deadline + KILL_OVERRUN_MS + SIGNING_MS);
  }, 20_000);
});
