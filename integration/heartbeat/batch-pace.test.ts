/**
 * Heartbeat batches follow the server's pace. A server may apply a batch's
 * statements one after another (DynamoDB Local does, between other clients'
 * writes), so a batch takes as many times longer than a lone write as it
 * has statements. Batches too large for such a server fail whole at their
 * attempt's bound, every lock in them at once; batches of the server's pace
 * keep every lock without a failed heartbeat.
 */
import { expect, it } from '@jest/globals';
import type { Lock } from '../../src/index.js';
import { operationOf, type ProxiedRequest, type RequestFault } from '../../test-kit/fault-proxy.js';
import { useFaultBed } from '../../test-kit/jest/fault-bed.js';
import { recordEvents } from '../../test-kit/jest/lock-events.js';
import { sleep } from '../../test-kit/test-locks.js';

const faults = useFaultBed('heartbeat-pace');

const LEASE_MS = 3_000;
const HEARTBEAT_MS = 750;
/** What each statement of a batch costs the server: 25 of them take longer than the period an attempt gets. */
const MS_PER_STATEMENT = 40;

/** Has the proxy delay each batch by its statements' cost, and returns the statement counts of the batches seen. */
function paceBatches(network: { readonly proxy: { setRule(rule: (request: ProxiedRequest) => RequestFault): void } }): number[] {
  const statementCounts: number[] = [];
  network.proxy.setRule((request): RequestFault => {
    if (operationOf(request) !== 'BatchExecuteStatement') return { action: 'forward' };
    const statements = request.body.toString('utf8').split('"Statement":').length - 1;
    statementCounts.push(statements);
    return { action: 'forward', delayMs: statements * MS_PER_STATEMENT };
  });
  return statementCounts;
}

it('on a server that applies statements one by one, batches shrink until they are answered in time, and no heartbeat fails', async () => {
  const network = await faults.proxied('paced', { sdkDefaults: true });
  const client = faults.bed.client({ ownerName: 'paced', leaseDuration: LEASE_MS, heartbeatPeriod: HEARTBEAT_MS }, network.dynamoDB);
  const locks: Lock[] = await Promise.all(
    Array.from({ length: 100 }, (_, i) => client.acquireLock(`paced-${i}`, { additionalTimeToWaitForLock: 20_000 })),
  );
  const events = recordEvents(client);
  const statementCounts = paceBatches(network);

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
  // Every later batch is one the server answers within a quarter of a period.
  const later = statementCounts.slice(batchesWhileLearning);
  expect(later.length).toBeGreaterThan(0);
  expect(Math.max(...later) * MS_PER_STATEMENT).toBeLessThanOrEqual(HEARTBEAT_MS / 4);
  network.proxy.passThrough();
}, 30_000);

it('smaller batches get more calls in flight, so that as many heartbeats go out per period', async () => {
  const network = await faults.proxied('many-paced', { sdkDefaults: true });
  const client = faults.bed.client({ ownerName: 'many-paced', leaseDuration: LEASE_MS, heartbeatPeriod: HEARTBEAT_MS }, network.dynamoDB);
  // 800 heartbeats a second: 8 batches of 4 in flight at 160 ms each carry 200, and each lock would wait 3 s,
  // its whole lease, for its next heartbeat; 32 of them carry 800. (800 locks asked for more than DynamoDB
  // Local keeps up with on a slow 2-core machine, and locks were lost before the batches were even paced.)
  // Recorded from the first acquisition: a lock lost while the others are taken is named with its reason.
  const events = recordEvents(client);
  const locks: Lock[] = await Promise.all(
    Array.from({ length: 600 }, (_, i) => client.acquireLock(`many-paced-${i}`, { additionalTimeToWaitForLock: 20_000 })),
  );
  paceBatches(network);

  await sleep(8 * HEARTBEAT_MS);

  expect(events.of('lost').map((seen) => `${seen.event.lock.partitionKey}: ${seen.event.error.message}`)).toEqual([]);
  expect(locks.filter((lock) => lock.state !== 'held')).toHaveLength(0);
  network.proxy.passThrough();
}, 30_000);
