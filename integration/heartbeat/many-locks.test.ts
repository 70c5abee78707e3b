/**
 * One client, many locks, one scheduler: every lock must be renewed in time
 * for several leases in a row, none given up by mistake.
 *
 * The heartbeat rate (locks / period) is kept well below what DynamoDB Local
 * sustains on a busy 2-core machine (about 200 writes/s at worst, measured):
 * beyond that, locks are lost because the server cannot renew them in time,
 * which is right, but not what this test is about.
 */
import { ScanCommand } from '@aws-sdk/client-dynamodb';
import { expect, it } from '@jest/globals';
import type { Lock } from '../../src/index.js';
import { useFaultBed } from '../../test-kit/jest/fault-bed.js';
import { recordEvents } from '../../test-kit/jest/lock-events.js';
import { sleep } from '../../test-kit/test-locks.js';

const LOCKS = 120;
const LEASE_MS = 3_000;
const HEARTBEAT_MS = 1_000;

const faults = useFaultBed('hb-many');

it(`${LOCKS} locks on one client stay held across three leases, each renewed`, async () => {
  const client = faults.bed.client({ ownerName: 'many', leaseDuration: LEASE_MS, heartbeatPeriod: HEARTBEAT_MS });
  const events = recordEvents(client);
  const locks: Lock[] = [];
  const keys = Array.from({ length: LOCKS }, (_, i) => `many-${i}`);
  for (let i = 0; i < keys.length; i += 20) {
    locks.push(...(await Promise.all(keys.slice(i, i + 20).map((key) => client.acquireLock(key)))));
  }
  const firstRvns = locks.map((lock) => lock.recordVersionNumber);

  // Counted from the last acquisition: every lock lives through three whole leases.
  await sleep(3 * LEASE_MS + HEARTBEAT_MS);

  expect(events.of('lost').map((seen) => seen.event.error.message)).toEqual([]);
  expect(locks.filter((lock) => lock.state !== 'held').map((lock) => lock.partitionKey)).toEqual([]);
  expect(locks.filter((lock) => lock.signal.aborted).map((lock) => lock.partitionKey)).toEqual([]);
  expect(locks.filter((lock, i) => lock.recordVersionNumber === firstRvns[i]).map((lock) => lock.partitionKey)).toEqual([]);
  // Renewed again and again, not once: three leases hold at least three heartbeat periods per lease.
  const heartbeatsOf = new Map<Lock, number>();
  for (const seen of events.of('heartbeat')) heartbeatsOf.set(seen.event.lock, (heartbeatsOf.get(seen.event.lock) ?? 0) + 1);
  expect(locks.filter((lock) => (heartbeatsOf.get(lock) ?? 0) < 3).map((lock) => lock.partitionKey)).toEqual([]);

  // The table agrees: each release conditions on the RVN the client last wrote, and all succeed.
  const released = await Promise.all(locks.map((lock) => lock.release()));
  expect(released.filter((ok) => !ok)).toEqual([]);
  const left = await faults.bed.raw.send(new ScanCommand({ TableName: faults.bed.tableName, ConsistentRead: true }));
  expect(left.Items ?? []).toEqual([]);
}, 40_000);
