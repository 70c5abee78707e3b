/**
 * Held locks come first under the client's own load, with the client README
 * tells users to build (SDK retries on): the heartbeats of locks held are
 * not held back by what the same client sends to acquire others — not by
 * the SDK's adaptive rate limiter, not by polls of waiting acquisitions, not
 * by requests that never get an answer.
 */
import { setMaxListeners } from 'node:events';
import { expect, it } from '@jest/globals';
import type { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { DynamoDBUnavailableError, LeaderElection, type Lock, type LockClient } from '../../src/index.js';
import { ACQUISITION_REQUESTS_IN_FLIGHT } from '../../src/acquire/acquisition-gate.js';
import { useFaultBed } from '../../test-kit/jest/fault-bed.js';
import { dynamoDBErrorReply, operationOf, type ProxiedRequest, type RequestFault } from '../../test-kit/fault-proxy.js';
import { recordEvents } from '../../test-kit/jest/lock-events.js';
import { sleep, waitUntil, watch } from '../../test-kit/test-locks.js';

const faults = useFaultBed('heartbeat-lane');

const FORWARD: RequestFault = { action: 'forward' };
const THROTTLE: RequestFault = { action: 'respond', reply: dynamoDBErrorReply('ThrottlingException') };
const BLACKHOLE: RequestFault = { action: 'blackhole' };

/** Whether the request's body has `text` in it (a lock key, quoted or as a prefix). */
const names = (request: ProxiedRequest, key: string): boolean => request.body.toString('utf8').includes(key);

/** The most requests of `operation` this client had in flight at once, counted where its `send` starts. */
function peakInFlight(dynamoDB: DynamoDBClient, operation: string): { readonly peak: number } {
  const counter = { peak: 0, now: 0 };
  dynamoDB.middlewareStack.add(
    (next, context) => async (args) => {
      if (context.commandName !== `${operation}Command`) return next(args);
      counter.peak = Math.max(counter.peak, ++counter.now);
      try {
        return await next(args);
      } finally {
        counter.now--;
      }
    },
    { step: 'initialize', name: `peakInFlight${operation}` },
  );
  return counter;
}

async function holdMany(client: LockClient, prefix: string, count: number): Promise<Lock[]> {
  return Promise.all(Array.from({ length: count }, (_, i) => client.acquireLock(`${prefix}-${i}`, { additionalTimeToWaitForLock: 0 })));
}

it("adaptive retries: throttled reads of a hot key do not hold back the client's heartbeats", async () => {
  const network = await faults.proxied('adaptive', { sdkDefaults: true, retries: { retryMode: 'adaptive' } });
  const client = faults.bed.client({ ownerName: 'adaptive', leaseDuration: 3_000, heartbeatPeriod: 600 }, network.dynamoDB);
  const events = recordEvents(client);
  const held = await holdMany(client, 'held', 20);

  // Every read of the hot key is throttled, as DynamoDB throttles a partition read too often.
  network.proxy.setRule((request) => (operationOf(request) === 'GetItem' && names(request, '"hot"') ? THROTTLE : FORWARD));
  for (let i = 0; i < 3; i++) void client.getLock('hot').catch(() => undefined);
  await sleep(6_000);

  expect(events.of('lost').map((seen) => `${seen.event.lock.partitionKey}: ${seen.event.error.message}`)).toEqual([]);
  expect(held.filter((lock) => lock.state !== 'held')).toHaveLength(0);
  network.proxy.passThrough();
}, 45_000);

it('polls of waiting acquisitions count against the acquisition limit, and cost no held lock', async () => {
  const network = await faults.proxied('waiter', { sdkDefaults: true });
  const reads = peakInFlight(network.dynamoDB, 'GetItem');
  const client = faults.bed.client({ ownerName: 'waiter', leaseDuration: 3_000, heartbeatPeriod: 750 }, network.dynamoDB);
  const events = recordEvents(client);
  const held = await holdMany(client, 'held', 100);
  // The locks waited on: held by a client that sends nothing more (a lease longer than the test), so that the
  // server's writes are the waiter's heartbeats, whose share of it the test is about.
  const other = faults.bed.client({ ownerName: 'other', leaseDuration: 60_000, backgroundHeartbeats: false });
  await holdMany(other, 'theirs', 800);

  const stop = new AbortController();
  setMaxListeners(0, stop.signal);
  const waits = Array.from({ length: 800 }, (_, i) =>
    client.acquireLock(`theirs-${i}`, { refreshPeriod: 250, additionalTimeToWaitForLock: Infinity, signal: stop.signal }).catch(() => undefined),
  );
  await sleep(6_000);
  stop.abort();
  await Promise.all(waits);

  expect(reads.peak).toBeLessThanOrEqual(ACQUISITION_REQUESTS_IN_FLIGHT);
  expect(events.of('lost').length).toBe(0);
  expect(held.filter((lock) => lock.state !== 'held')).toHaveLength(0);
}, 60_000);

it('campaign writes that never get an answer are abandoned; calls queued behind them end at their own cut-off, unavailable', async () => {
  const network = await faults.proxied('campaigner', { sdkDefaults: true });
  const client = faults.bed.client({ ownerName: 'campaigner', leaseDuration: 2_000, heartbeatPeriod: 500 }, network.dynamoDB);
  // The campaigns' writes hit dead connections; every other request is answered.
  network.proxy.setRule((request) => {
    const write = operationOf(request) === 'PutItem' || operationOf(request) === 'BatchExecuteStatement';
    return write && names(request, 'campaign-') ? BLACKHOLE : FORWARD;
  });
  const stop = new AbortController();
  setMaxListeners(0, stop.signal);
  const campaigns = Array.from({ length: ACQUISITION_REQUESTS_IN_FLIGHT }, (_, i) =>
    watch(new LeaderElection(client, `campaign-${i}`, { refreshPeriod: 500, leaseDuration: 8_000 }).campaign({ signal: stop.signal })),
  );
  await waitUntil('every campaign has sent its write', () => network.proxy.exchanges.filter((e) => e.fault.action === 'blackhole').length >= 4);
  await sleep(500);

  // Their cut-off: 1 s beyond the (absent) holder's lease, then a lease (2 s) for requests. No slot comes free
  // before the campaigns' writes are abandoned (a lease of theirs, 8 s): both calls end at their own cut-off.
  const free = watch(client.acquireLock('free', { additionalTimeToWaitForLock: 1_000 }));
  const tried = watch(client.tryAcquireLock('tried', { additionalTimeToWaitForLock: 1_000 }));
  await waitUntil('both calls settled', () => free.settled() && tried.settled(), { timeoutMs: 8_000 });
  for (const call of [free, tried]) {
    const error = await call.promise.then(
      () => 'acquired',
      (rejected: unknown) => rejected,
    );
    expect(error).toBeInstanceOf(DynamoDBUnavailableError);
    expect((error as Error).message).toMatch(/no request slot came free for \d+ ms/);
  }
  const theirs = network.proxy.exchanges.filter((exchange) => names(exchange.request, '"free"') || names(exchange.request, '"tried"'));
  expect(theirs.map((exchange) => operationOf(exchange.request))).toEqual([]);

  // The campaigns' writes are abandoned (a lease of theirs, 8 s) and sent again; healed, every campaign wins.
  network.proxy.passThrough();
  const leaderships = await Promise.all(campaigns.map((campaign) => campaign.promise));
  expect(leaderships).toHaveLength(ACQUISITION_REQUESTS_IN_FLIGHT);
  stop.abort();
}, 60_000);
