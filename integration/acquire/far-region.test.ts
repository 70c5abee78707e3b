/**
 * A distant region answers every request late, heartbeats included, and
 * that alone is not the client falling behind: acquisitions go out as many
 * at a time as anywhere else. The gate holds them back while heartbeats
 * are answered later than they usually are, which is what the client's own
 * traffic does to a server short of capacity.
 */
import { expect, it } from '@jest/globals';
import type { Lock, LockClient } from '../../src/index.js';
import { USUAL_ROUND_TRIP_WINDOW_PERIODS } from '../../src/heartbeat/heartbeat-tuning.js';
import { operationOf, type RequestFault } from '../../test-kit/fault-proxy.js';
import { useFaultBed } from '../../test-kit/jest/fault-bed.js';
import { recordEvents } from '../../test-kit/jest/lock-events.js';
import type { ProxiedDynamoDB } from '../../test-kit/proxied-dynamodb.js';
import { sleep } from '../../test-kit/test-locks.js';

const faults = useFaultBed('far-region');

/** The region's latency, above a twentieth of the heartbeat period: every heartbeat in flight is answered that late. */
const LATENCY_MS = 600;
/** Long enough that a twentieth of it (150 ms) leaves room for a busy test machine's own delays. */
const HEARTBEAT_MS = 3_000;
const LEASE_MS = 9_000;
/** Held, and taken apart over a period, so that their heartbeats fall due apart: one of them is nearly always in flight. */
const HELD = 10;
/** Taken one after another, each in a request of its own, within a wait of a second (cut off 10 s on): one at a time, they would take 24 s. */
const WANTED = 40;
const WAIT_MS = 1_000;

interface FarRegion {
  readonly client: LockClient;
  readonly held: Lock[];
  /** Sets how late each heartbeat request is answered from now on (LATENCY_MS at first, as every other request). */
  heartbeatLatency(ms: number): void;
  /** The most PutItem requests (new-lock writes) in flight at once, as the client sent them. */
  readonly mostPutsInFlight: () => number;
}

/** A client in a far region holding HELD locks, whose heartbeats have come back at the region's latency for a window and more. */
async function farRegion(network: ProxiedDynamoDB, heartbeatConcurrency: number): Promise<FarRegion> {
  const client = faults.bed.client(
    { ownerName: 'far', leaseDuration: LEASE_MS, heartbeatPeriod: HEARTBEAT_MS, heartbeatConcurrency },
    network.dynamoDB,
  );
  let heartbeatMs = LATENCY_MS;
  let puts = 0;
  let mostPuts = 0;
  network.dynamoDB.middlewareStack.add(
    (next, context) => async (args) => {
      if (context.commandName !== 'PutItemCommand') return next(args);
      mostPuts = Math.max(mostPuts, ++puts);
      try {
        return await next(args);
      } finally {
        puts--;
      }
    },
    { step: 'initialize', name: 'countPuts' },
  );
  network.proxy.setRule((request): RequestFault => {
    const operation = operationOf(request);
    const heartbeat = operation === 'UpdateItem' || operation === 'BatchExecuteStatement';
    return { action: 'forward', delayMs: heartbeat ? heartbeatMs : LATENCY_MS };
  });
  const createdAt = performance.now();
  const held = await Promise.all(
    Array.from({ length: HELD }, async (_, i) => {
      await sleep((i * HEARTBEAT_MS) / HELD);
      return client.acquireLock(`held-${i}`);
    }),
  );
  // A whole window of heartbeat answers from the first one (a period and a request after the first
  // lock), and a little more: the client knows how late they usually come back.
  await sleep(createdAt + (USUAL_ROUND_TRIP_WINDOW_PERIODS + 2) * HEARTBEAT_MS - performance.now());
  mostPuts = 0;
  return {
    client,
    held,
    heartbeatLatency: (ms) => {
      heartbeatMs = ms;
    },
    mostPutsInFlight: () => mostPuts,
  };
}

/** Takes the WANTED free locks, each call a little after the one before, so that none goes in a batch with another. */
async function takeWanted(client: LockClient): Promise<string[]> {
  const outcomes = await Promise.allSettled(
    Array.from({ length: WANTED }, async (_, i) => {
      await sleep(i * 10);
      return client.acquireLock(`wanted-${i}`, { additionalTimeToWaitForLock: WAIT_MS });
    }),
  );
  return outcomes.flatMap((outcome, i) => (outcome.status === 'rejected' ? [`wanted-${i}: ${String(outcome.reason)}`] : []));
}

it('in a region that answers every request late, acquisitions are not held to one at a time, and each takes its free lock', async () => {
  const network = await faults.proxied('far-region', { sdkDefaults: true });
  // Eight heartbeat calls: the gate's share while behind is then a single acquisition request at a time.
  const region = await farRegion(network, 8);
  const events = recordEvents(region.client);

  const failures = await takeWanted(region.client);

  expect(failures.slice(0, 3)).toEqual([]);
  expect(failures).toHaveLength(0);
  expect(region.mostPutsInFlight()).toBeGreaterThan(1);
  expect(events.of('lost').map((seen) => `${seen.event.lock.partitionKey}: ${seen.event.error.message}`)).toEqual([]);
  expect(region.held.filter((lock) => lock.state !== 'held')).toHaveLength(0);
  network.proxy.passThrough();
}, 60_000);

it('there too, heartbeats answered later than usual hold acquisitions to a few at a time', async () => {
  const network = await faults.proxied('far-region-busy', { sdkDefaults: true });
  // 32 heartbeat calls, more than the late heartbeats take: none waits unsent, they are only answered late.
  const region = await farRegion(network, 32);
  const events = recordEvents(region.client);
  region.heartbeatLatency(2 * LATENCY_MS); // still within the period a heartbeat attempt gets
  // Until the heartbeats sent since are late: one of them is late nearly all the time from then on.
  // The usual round trip stays the region's until a whole window of late answers has passed, after
  // every call below has ended by its cut-off.
  await sleep(HEARTBEAT_MS);

  await takeWanted(region.client);

  // heartbeatConcurrency / 16 while behind.
  expect(region.mostPutsInFlight()).toBeLessThanOrEqual(2);
  expect(events.of('lost').map((seen) => `${seen.event.lock.partitionKey}: ${seen.event.error.message}`)).toEqual([]);
  network.proxy.passThrough();
}, 60_000);
