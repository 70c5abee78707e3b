/**
 * Heartbeat batches follow the server's pace. A server may apply a batch's
 * statements one after another (DynamoDB Local does, between other clients'
 * writes), so a batch takes as many times longer than a lone write as it
 * has statements. Batches too large for such a server fail whole at their
 * attempt's bound, every lock in them at once; batches of the server's pace
 * keep every lock without a failed heartbeat. A server slow for every
 * request, whatever its size, is the other case: there smaller batches
 * would only carry fewer heartbeats at a time.
 */
import { expect, it } from '@jest/globals';
import type { Lock } from '../../src/index.js';
import { CLIENT_DEFAULTS } from '../../src/settings/defaults.js';
import { operationOf, type FaultProxy, type ProxiedRequest, type RequestFault } from '../../test-kit/fault-proxy.js';
import { useFaultBed } from '../../test-kit/jest/fault-bed.js';
import { recordEvents } from '../../test-kit/jest/lock-events.js';
import { sleep } from '../../test-kit/test-locks.js';

const faults = useFaultBed('heartbeat-pace');

const LEASE_MS = 3_000;
const HEARTBEAT_MS = 750;
/** What each statement of a batch costs the server: 25 of them take longer than the period an attempt gets. */
const MS_PER_STATEMENT = 40;
/**
 * The second test's locks, and what each of their statements costs: 200 heartbeats a second at 80 ms
 * each keep 16 batches in flight on average, twice the 8 (a quarter of the default 32 slots) that
 * batches were held to whatever their size. 200 a second is what DynamoDB Local keeps up with on a
 * slow 2-core machine beside other test workers: at 400 it fell behind on its own, whatever the batches.
 */
const MANY_LOCKS = 150;
const MANY_MS_PER_STATEMENT = 80;

/**
 * The third test's server: every heartbeat waits this long whatever it holds (a far region, or a
 * server queueing every call). On 8 slots, batches of 2 carry 16 heartbeats per 600 ms, 27 a second,
 * against the 50 a second that 75 locks beating every 1.5 s need: the locks fall further behind
 * every second, until they are lost. Larger batches carry the 50 heartbeats in flight that 8 slots
 * allow, 83 a second.
 */
const SLOW_EVERY_REQUEST_MS = 600;
const SLOW_LOCKS = 75;
const SLOW_CONCURRENCY = 8;
const SLOW_HEARTBEAT_MS = 1_500;
const SLOW_LEASE_MS = 4_500;

/** What the proxy saw of the batches: their statement counts, and the most it held at once (arrived, not yet answered). */
interface PacedBatches {
  readonly statementCounts: number[];
  readonly mostInFlight: number;
}

/** Has the proxy delay each batch by its statements' cost, and tells what it saw of the batches. */
function paceBatches(
  network: { readonly proxy: Pick<FaultProxy, 'setRule' | 'onServerReply'> },
  msPerStatement = MS_PER_STATEMENT,
): PacedBatches {
  const seen = { statementCounts: [] as number[], mostInFlight: 0 };
  // Only the batches paced here: those sent before are answered without having been counted.
  const inFlight = new Set<ProxiedRequest>();
  network.proxy.onServerReply = (request) => inFlight.delete(request);
  network.proxy.setRule((request): RequestFault => {
    if (operationOf(request) !== 'BatchExecuteStatement') return { action: 'forward' };
    const statements = request.body.toString('utf8').split('"Statement":').length - 1;
    seen.statementCounts.push(statements);
    inFlight.add(request);
    seen.mostInFlight = Math.max(seen.mostInFlight, inFlight.size);
    return { action: 'forward', delayMs: statements * msPerStatement };
  });
  return seen;
}

it('on a server that applies statements one by one, batches shrink until they are answered in time, and no heartbeat fails', async () => {
  const network = await faults.proxied('paced', { sdkDefaults: true });
  const client = faults.bed.client({ ownerName: 'paced', leaseDuration: LEASE_MS, heartbeatPeriod: HEARTBEAT_MS }, network.dynamoDB);
  const events = recordEvents(client);
  const locks: Lock[] = await Promise.all(
    Array.from({ length: 60 }, (_, i) => client.acquireLock(`paced-${i}`, { additionalTimeToWaitForLock: 20_000 })),
  );
  const { statementCounts } = paceBatches(network);

  // The first periods find the pace; after them not one heartbeat may fail.
  await sleep(4 * HEARTBEAT_MS);
  const failedWhileLearning = events.of('heartbeatError').length;
  const batchesWhileLearning = statementCounts.length;
  await sleep(6 * HEARTBEAT_MS);

  expect(events.of('lost').map((seen) => `${seen.event.lock.partitionKey}: ${seen.event.error.message}`)).toEqual([]);
  expect(
    events
      .of('heartbeatError')
      .slice(failedWhileLearning)
      .map((seen) => String(seen.event.error)),
  ).toEqual([]);
  expect(locks.filter((lock) => lock.state !== 'held')).toHaveLength(0);
  // Every later batch costs the server well under the period an attempt gets. While calls are to
  // spare a slow batch halves, down to 4 here (160 ms); while due heartbeats wait for a call it keeps
  // its size up to three quarters of a period, and the doubling stops at 8 here (320 ms).
  const later = statementCounts.slice(batchesWhileLearning);
  expect(later.length).toBeGreaterThan(0);
  expect(Math.max(...later) * MS_PER_STATEMENT).toBeLessThanOrEqual(HEARTBEAT_MS / 2);
  network.proxy.passThrough();
}, 30_000);

it('smaller batches get more calls in flight, so that as many heartbeats go out per period', async () => {
  const network = await faults.proxied('many-paced', { sdkDefaults: true });
  const client = faults.bed.client({ ownerName: 'many-paced', leaseDuration: LEASE_MS, heartbeatPeriod: HEARTBEAT_MS }, network.dynamoDB);
  // Recorded from the first acquisition: a lock lost while the others are taken is named with its reason.
  const events = recordEvents(client);
  const locks: Lock[] = await Promise.all(
    Array.from({ length: MANY_LOCKS }, (_, i) => client.acquireLock(`many-paced-${i}`, { additionalTimeToWaitForLock: 20_000 })),
  );
  const batches = paceBatches(network, MANY_MS_PER_STATEMENT);

  await sleep(8 * HEARTBEAT_MS);

  expect(events.of('lost').map((seen) => `${seen.event.lock.partitionKey}: ${seen.event.error.message}`)).toEqual([]);
  expect(locks.filter((lock) => lock.state !== 'held')).toHaveLength(0);
  // Batches of a few heartbeats each: more of them in flight than a quarter of the slots that batches of 25 get.
  expect(Math.max(...batches.statementCounts)).toBeLessThan(CLIENT_DEFAULTS.heartbeatBatchSize);
  expect(batches.mostInFlight).toBeGreaterThan(CLIENT_DEFAULTS.heartbeatConcurrency / 4);
  network.proxy.passThrough();
}, 30_000);

it('on a server slow for every request whatever its size, batches keep their size and every lock is kept', async () => {
  const network = await faults.proxied('slow-every', { sdkDefaults: true });
  const client = faults.bed.client(
    { ownerName: 'slow-every', leaseDuration: SLOW_LEASE_MS, heartbeatPeriod: SLOW_HEARTBEAT_MS, heartbeatConcurrency: SLOW_CONCURRENCY },
    network.dynamoDB,
  );
  const events = recordEvents(client);
  // Every heartbeat is slow from the first, as in a far region; acquisitions are not, so that the
  // burst of them is over before heartbeats fall behind (which holds acquisitions back).
  const statementCounts: number[] = [];
  network.proxy.setRule((request): RequestFault => {
    const operation = operationOf(request);
    if (operation === 'BatchExecuteStatement') statementCounts.push(request.body.toString('utf8').split('"Statement":').length - 1);
    return operation === 'BatchExecuteStatement' || operation === 'UpdateItem'
      ? { action: 'forward', delayMs: SLOW_EVERY_REQUEST_MS }
      : { action: 'forward' };
  });
  const locks: Lock[] = await Promise.all(
    Array.from({ length: SLOW_LOCKS }, (_, i) => client.acquireLock(`slow-every-${i}`, { additionalTimeToWaitForLock: 20_000 })),
  );

  await sleep(2 * SLOW_HEARTBEAT_MS);
  const batchesWhileLearning = statementCounts.length;
  await sleep(5 * SLOW_HEARTBEAT_MS);

  expect(events.of('lost').map((seen) => `${seen.event.lock.partitionKey}: ${seen.event.error.message}`)).toEqual([]);
  expect(locks.filter((lock) => lock.state !== 'held')).toHaveLength(0);
  // Batches of 2 were no faster than larger ones: later batches grew past the size they started at.
  const later = statementCounts.slice(batchesWhileLearning);
  expect(later.length).toBeGreaterThan(0);
  expect(Math.max(...later)).toBeGreaterThan(4);
  network.proxy.passThrough();
}, 40_000);
