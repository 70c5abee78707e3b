/**
 * The renewal of a winning write whose reply came late, when the renewal
 * fails or comes late too. What was won stays won: a write DynamoDB
 * confirmed, or that a read-back proved ours, goes to the caller with the
 * safe time that write gives, and is never left in the table as a lock
 * nobody holds. A server slower than a heartbeat period ends the call with
 * an error that says so, once, instead of renewing for ever.
 */
import { beforeEach, expect, it } from '@jest/globals';
import { DynamoDBTooSlowError, DynamoDBUnavailableError, LeaderElection, isDynamoDBLockError, type LockGroup } from '../../src/index.js';
import { MOST_RENEWALS } from '../../src/acquire/late-reply.js';
import { dynamoDBErrorReply, operationOf, type FaultProxy, type ProxiedRequest } from '../../test-kit/fault-proxy.js';
import { useFaultBed } from '../../test-kit/jest/fault-bed.js';
import { holdNextReply } from '../../test-kit/late-reply.js';
import { SHORT_LEASE } from '../../test-kit/short-lease.js';
import { sleep, waitUntil } from '../../test-kit/test-locks.js';

const faults = useFaultBed('late-renewal');

// A DynamoDB Local just started takes seconds over its first request of each kind; these tests time replies against a heartbeat period.
beforeEach(async () => {
  const client = faults.bed.client({ ownerName: 'warm-up' });
  const group = await client.acquireLocks(['warm-up-a', 'warm-up-b']);
  for (const lock of group.locks) await client.sendHeartbeat(lock);
  await group.release();
  await (await client.acquireLock('warm-up-a')).release();
});

// Long enough that a busy DynamoDB Local leaves the won lock some of its lease.
const LEASE_MS = 4_000;
// Well above a busy DynamoDB Local's own round trip, which would otherwise make every reply late.
const HEARTBEAT_MS = 750;
/** Longer than the heartbeat period: the winning write's reply arrives when its first heartbeat is due. */
const LATE_MS = 900;

const THROTTLED = { action: 'respond', reply: dynamoDBErrorReply('ThrottlingException') } as const;
const isOperation = (operation: string) => (request: ProxiedRequest) => operationOf(request) === operation;
const count = (proxy: FaultProxy, operation: string): number =>
  proxy.exchanges.filter((exchange) => operationOf(exchange.request) === operation).length;

/** Throttles every UpdateItem (a renewal, a heartbeat) that `matches`; the rest goes through. */
function throttleUpdates(proxy: FaultProxy, matches: (request: ProxiedRequest) => boolean = () => true): void {
  proxy.setRule((request) => (operationOf(request) === 'UpdateItem' && matches(request) ? THROTTLED : { action: 'forward' }));
}

/** Throttles every attempt of the first UpdateItem (the renewal); the rest goes through. */
function throttleRenewal(proxy: FaultProxy): void {
  let renewal: string | undefined;
  proxy.setRule((request) => {
    if (operationOf(request) !== 'UpdateItem') return { action: 'forward' };
    renewal ??= request.headers['amz-sdk-invocation-id'];
    return request.headers['amz-sdk-invocation-id'] === renewal ? THROTTLED : { action: 'forward' };
  });
}

const aboutKey = (key: string) => (request: ProxiedRequest) => request.body.toString().includes(`"${key}"`);

/** Settles `promise` or says it is still pending after `ms`; its timer ends with it, not to keep the worker alive. */
async function within<T>(promise: Promise<T>, ms: number): Promise<{ settled: true; value?: T; error?: unknown } | { settled: false }> {
  let timer: NodeJS.Timeout | undefined;
  const pending = new Promise<{ settled: false }>((resolve) => (timer = setTimeout(() => resolve({ settled: false }), ms)));
  const settled = promise.then(
    (value) => ({ settled: true, value }) as const,
    (error: unknown) => ({ settled: true, error }) as const,
  );
  try {
    return await Promise.race([settled, pending]);
  } finally {
    clearTimeout(timer);
  }
}

it('acquireLock: a late win whose renewal is throttled is handed over with the safe time of its write', async () => {
  const network = await faults.proxied('won', { sdkDefaults: true });
  const client = faults.bed.client({ ownerName: 'won', leaseDuration: LEASE_MS, heartbeatPeriod: HEARTBEAT_MS }, network.dynamoDB);
  const reply = holdNextReply(network.dynamoDB, 'PutItemCommand', LATE_MS);
  throttleRenewal(network.proxy);

  const lock = await client.acquireLock('won');

  expect(reply.held()).toBe(true);
  expect(count(network.proxy, 'UpdateItem')).toBeGreaterThan(0);
  expect(lock.isHeld()).toBe(true);
  // Counted from the winning write: a lease less the late reply, and less the margin.
  expect(lock.safeTimeLeft()).toBeLessThanOrEqual(LEASE_MS - LATE_MS);
  // The lock's first heartbeat is already due: the table may hold it a moment before the lock hears its answer.
  await waitUntil('the table holds the lock as handed over', async () => (await faults.bed.rvn('won')) === lock.recordVersionNumber);
  network.proxy.passThrough();
  await lock.release();
  expect(await faults.bed.item('won')).toBeUndefined();
}, 40_000);

it('acquireLocks: a late group whose renewal of one member is throttled is handed over whole, not given up and taken again', async () => {
  const network = await faults.proxied('won-group', { sdkDefaults: true });
  const client = faults.bed.client({ ownerName: 'won-group', leaseDuration: LEASE_MS, heartbeatPeriod: HEARTBEAT_MS }, network.dynamoDB);
  holdNextReply(network.dynamoDB, 'TransactWriteItemsCommand', LATE_MS);
  throttleUpdates(network.proxy, aboutKey('won-a'));

  const group = await client.acquireLocks(['won-a', 'won-b']);

  expect(group.isHeld()).toBe(true);
  // As for one lock: the first heartbeats are already due, and the table may hold one a moment
  // before its lock hears its answer.
  for (const lock of group.locks) {
    await waitUntil(
      `the table holds ${lock.partitionKey} as handed over`,
      async () => (await faults.bed.rvn(lock.partitionKey)) === lock.recordVersionNumber,
    );
  }
  // The transaction that won is the only one, and nothing of it was released.
  expect(count(network.proxy, 'TransactWriteItems')).toBe(1);
  expect(count(network.proxy, 'DeleteItem')).toBe(0);
  network.proxy.passThrough();
  await group.release();
}, 40_000);

it('acquireLocks: a lost transaction read back as ours and late, every renewal throttled, sends a bounded number of requests', async () => {
  // One attempt per request, the SDK retrying nothing; long enough for the slow reads.
  const network = await faults.proxied('hot', { requestTimeout: 3_000 });
  const client = faults.bed.client({ ownerName: 'hot', leaseDuration: LEASE_MS, heartbeatPeriod: HEARTBEAT_MS }, network.dynamoDB);
  let slowReads = 0;
  const { proxy } = network;
  proxy.setRule((request) => {
    if (operationOf(request) === 'UpdateItem') return THROTTLED;
    // The round that reads the transaction back finds it ours after a heartbeat period.
    if (operationOf(request) === 'GetItem' && count(proxy, 'TransactWriteItems') > 0 && slowReads++ < 2) {
      return { action: 'forward', delayMs: LATE_MS };
    }
    return { action: 'forward' };
  });
  const lost = proxy.dropNextReply(isOperation('TransactWriteItems'));

  const call = client.acquireLocks(['hot-a', 'hot-b']);
  // The lost reply's timeout, the slow reads and the renewals take about 5 s, more on a loaded machine: the counts below
  // catch a renewal loop.
  const outcome = await within(call, 15_000);
  await lost;
  const updates = count(proxy, 'UpdateItem');
  const reads = count(proxy, 'GetItem');
  proxy.passThrough();
  await call.then((group) => group.release()).catch(() => undefined);

  // One renewal per key at most, and the reads of a handful of rounds, not hundreds.
  expect(updates).toBeLessThanOrEqual(2);
  expect(reads).toBeLessThanOrEqual(8);
  expect(outcome.settled && outcome.error).toBeUndefined();
}, 40_000);

it('acquireLock with an infinite wait, every round trip slower than a heartbeat period: a typed error that says so, and no item left', async () => {
  const network = await faults.proxied('slow', { requestTimeout: 3_000 });
  const client = faults.bed.client({ ownerName: 'slow', leaseDuration: LEASE_MS, heartbeatPeriod: HEARTBEAT_MS }, network.dynamoDB);
  network.proxy.addLatency(LATE_MS);

  const outcome = await within(client.acquireLock('slow', { additionalTimeToWaitForLock: Infinity }), 25_000);

  expect(outcome.settled).toBe(true);
  const error = outcome.settled ? outcome.error : undefined;
  expect(error).toBeInstanceOf(DynamoDBTooSlowError);
  expect(isDynamoDBLockError(error)).toBe(true);
  expect((error as Error).message).toMatch(/answered in \d+ ms, longer than the heartbeat period \(750 ms\)/);
  network.proxy.passThrough();
  expect(await faults.bed.item('slow')).toBeUndefined();
  // A bounded number of renewals, not one after another for ever.
  expect(count(network.proxy, 'UpdateItem')).toBeLessThanOrEqual(MOST_RENEWALS);
}, 40_000);

it('acquireLock with a finite wait on the same server: not "did not answer successfully", and no item left', async () => {
  const network = await faults.proxied('slow-finite', { requestTimeout: 3_000 });
  const client = faults.bed.client({ ownerName: 'slow-finite', leaseDuration: LEASE_MS, heartbeatPeriod: HEARTBEAT_MS }, network.dynamoDB);
  network.proxy.addLatency(LATE_MS);

  // A wait long enough that the call is not cut off before its renewals are done.
  const outcome = await within(client.acquireLock('slow-finite', { additionalTimeToWaitForLock: 10_000 }), 25_000);

  const error = outcome.settled ? outcome.error : undefined;
  expect(error).toBeInstanceOf(DynamoDBTooSlowError);
  expect((error as Error).message).not.toContain('did not answer successfully');
  // Still a DynamoDB problem to code that tells it from "someone else holds it".
  expect(error).toBeInstanceOf(DynamoDBUnavailableError);
  network.proxy.passThrough();
  expect(await faults.bed.item('slow-finite')).toBeUndefined();
}, 40_000);

it("acquireLock: a late win's renewal goes by the heartbeats' lane, not by the acquisitions' sockets and retry strategy", async () => {
  const network = await faults.proxied('lane', { sdkDefaults: true });
  const client = faults.bed.client(
    { ownerName: 'lane', leaseDuration: LEASE_MS, heartbeatPeriod: HEARTBEAT_MS, backgroundHeartbeats: false },
    network.dynamoDB,
  );
  holdNextReply(network.dynamoDB, 'PutItemCommand', LATE_MS);

  const lock = await client.acquireLock('lane');
  await client.sendHeartbeat(lock);

  // One request at a time, each client reuses its connection: the renewal's is the heartbeats', not the write's.
  const connections = (operation: string): number[] =>
    network.proxy.exchanges
      .filter((exchange) => operationOf(exchange.request) === operation && aboutKey('lane')(exchange.request))
      .map((exchange) => exchange.request.connection);
  const [renewal, heartbeat] = connections('UpdateItem');
  expect(connections('UpdateItem')).toHaveLength(2);
  expect(renewal).toBe(heartbeat);
  expect(connections('PutItem')).not.toContain(renewal);
  await lock.release();
}, 40_000);

it('acquireLock: a late win whose renewal was applied but never answered is handed over with the renewal in doubt', async () => {
  const network = await faults.proxied('in-doubt', { sdkDefaults: true });
  const client = faults.bed.client({ ownerName: 'in-doubt', leaseDuration: LEASE_MS, heartbeatPeriod: HEARTBEAT_MS }, network.dynamoDB);
  holdNextReply(network.dynamoDB, 'PutItemCommand', LATE_MS);
  // The renewal is applied and its reply lost; its retries, and heartbeats, get no answer until the check below.
  let updates = 0;
  network.proxy.setRule((request) =>
    operationOf(request) !== 'UpdateItem' ? { action: 'forward' } : updates++ === 0 ? { action: 'dropReply' } : { action: 'blackhole' },
  );

  const lock = await client.acquireLock('in-doubt');

  expect(lock.safeTimeLeft()).toBeLessThanOrEqual(LEASE_MS - LATE_MS);
  // The table holds the renewal; the lock goes on from the write that won, and accepts either RVN.
  expect(await faults.bed.rvn('in-doubt')).not.toBe(lock.recordVersionNumber);
  network.proxy.passThrough();
  network.proxy.resetOpenConnections();
  await client.sendHeartbeat(lock);
  await waitUntil('the table holds the lock as heartbeated', async () => (await faults.bed.rvn('in-doubt')) === lock.recordVersionNumber);
  await lock.release();
  expect(await faults.bed.item('in-doubt')).toBeUndefined();
}, 40_000);

it("acquireLocks: a key taken over while the reply was late stays the new holder's; the group is freed and taken once it is free", async () => {
  const network = await faults.proxied('overtaken', { requestTimeout: 8_000 });
  const late = faults.bed.client({ ownerName: 'overtaken-late', ...SHORT_LEASE }, network.dynamoDB);
  // A longer lease than the late client's: it stays held through the sleep below while the late client waits on it.
  const other = faults.bed.client({ ownerName: 'overtaken-other', leaseDuration: 6_000, heartbeatPeriod: 500 });
  // Later than a lease and the other client's reads: it takes the first key over before the transaction's answer arrives.
  holdNextReply(network.dynamoDB, 'TransactWriteItemsCommand', 3_500);
  let group: LockGroup | undefined;
  const call = late.acquireLocks(['overtaken-x', 'overtaken-y'], { additionalTimeToWaitForLock: 30_000 }).then((won) => (group = won));
  await sleep(300);
  const taken = await other.acquireLock('overtaken-x', { refreshPeriod: 100, additionalTimeToWaitForLock: 10_000 });
  await sleep(4_000);

  expect(group).toBeUndefined();
  expect(taken.isHeld()).toBe(true);
  expect(await faults.bed.owner('overtaken-x')).toBe('overtaken-other');
  expect(await faults.bed.item('overtaken-y')).toBeUndefined();
  await taken.release();
  expect((await call).isHeld()).toBe(true);
  await (await call).release();
}, 60_000);

it('lead() on a server slower than a heartbeat period ends with DynamoDBTooSlowError, never leading, no item left', async () => {
  const network = await faults.proxied('slow-lead', { requestTimeout: 3_000 });
  const client = faults.bed.client({ ownerName: 'slow-lead', leaseDuration: LEASE_MS, heartbeatPeriod: HEARTBEAT_MS }, network.dynamoDB);
  network.proxy.addLatency(LATE_MS);
  let led = false;

  const outcome = await within(
    new LeaderElection(client, 'slow-lead').lead(() => (led = true)),
    25_000,
  );

  expect(outcome.settled && outcome.error).toBeInstanceOf(DynamoDBTooSlowError);
  expect(led).toBe(false);
  network.proxy.passThrough();
  expect(await faults.bed.item('slow-lead')).toBeUndefined();
}, 40_000);
