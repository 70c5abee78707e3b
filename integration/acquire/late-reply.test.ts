/**
 * A winning write whose reply comes late: its lease counts from when it left
 * (dynamodb/departure.ts), so by the time the reply arrives the lock may
 * have little safe time left, or none. Under load that is common (a socket
 * queue, a busy server), and such a lock used to reach its caller only to be
 * given up at once as expired. Nobody can have taken it over while its RVN
 * stayed ours, and the caller has not acted on it yet: the acquisition first
 * renews it with a heartbeat conditioned on that RVN, and hands it over with
 * the lease counted from the renewal.
 */
import { expect, it } from '@jest/globals';
import type { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { LockNotGrantedError, type Lock } from '../../src/index.js';
import { operationOf } from '../../test-kit/fault-proxy.js';
import { useFaultBed } from '../../test-kit/jest/fault-bed.js';
import { holdNextReply } from '../../test-kit/late-reply.js';
import { waitUntil } from '../../test-kit/test-locks.js';

const faults = useFaultBed('late-reply');

const LEASE_MS = 3_000;
const HEARTBEAT_MS = 750;

const holdNextPutReply = (dynamoDB: DynamoDBClient, ms: number) => holdNextReply(dynamoDB, 'PutItemCommand', ms);

/** The lock's heartbeats go on: the table holds its RVN once a heartbeat in flight, if any, has been answered. */
const untilTableHolds = (key: string, lock: Lock): Promise<void> =>
  waitUntil(`the table holds the RVN of ${key}`, async () => (await faults.bed.rvn(key)) === lock.recordVersionNumber);

it('a lock whose reply came after its safe time is renewed before the caller gets it', async () => {
  const network = await faults.proxied('late', { sdkDefaults: true });
  const client = faults.bed.client({ ownerName: 'late', leaseDuration: LEASE_MS, heartbeatPeriod: HEARTBEAT_MS }, network.dynamoDB);
  const reply = holdNextPutReply(network.dynamoDB, LEASE_MS);

  // A wait keeps the call's cut-off (its wait plus a lease) beyond the late reply, as with the default wait.
  const lock = await client.acquireLock('late', { additionalTimeToWaitForLock: LEASE_MS });

  expect(reply.held()).toBe(true);
  expect(lock.isHeld()).toBe(true);
  // Renewed: the caller gets some of a new lease, where the write's own has no safe time left.
  expect(lock.safeTimeLeft()).toBeGreaterThan(LEASE_MS / 4);
  await untilTableHolds('late', lock);
  await lock.release();
}, 30_000);

it('a lock taken over while the reply was late is not handed over', async () => {
  const network = await faults.proxied('slow', { sdkDefaults: true });
  const slow = faults.bed.client({ ownerName: 'slow', leaseDuration: LEASE_MS, heartbeatPeriod: HEARTBEAT_MS }, network.dynamoDB);
  const other = faults.bed.client({ ownerName: 'other', leaseDuration: LEASE_MS, heartbeatPeriod: HEARTBEAT_MS });
  // Long enough for the other client to watch the written RVN for a whole lease and take the lock over.
  const reply = holdNextPutReply(network.dynamoDB, 2 * LEASE_MS);

  const slowCall = slow.acquireLock('contested', { additionalTimeToWaitForLock: 0 });
  await waitUntil('the slow write applied', async () => (await faults.bed.owner('contested')) === 'slow');
  const taken = await other.acquireLock('contested', { additionalTimeToWaitForLock: 2 * LEASE_MS });

  await expect(slowCall).rejects.toBeInstanceOf(LockNotGrantedError);
  expect(reply.held()).toBe(true);
  expect(taken.isHeld()).toBe(true);
  expect(await faults.bed.owner('contested')).toBe('other');
  await taken.release();
}, 30_000);

it('a renewal whose reply was lost counts as applied when the retry of the SDK finds it', async () => {
  const network = await faults.proxied('renewal', { sdkDefaults: true });
  const client = faults.bed.client({ ownerName: 'renewal', leaseDuration: LEASE_MS, heartbeatPeriod: HEARTBEAT_MS }, network.dynamoDB);
  holdNextPutReply(network.dynamoDB, LEASE_MS);
  const lost = network.proxy.dropNextReply((request) => operationOf(request) === 'UpdateItem');

  const lock = await client.acquireLock('renewal', { additionalTimeToWaitForLock: LEASE_MS });

  await lost;
  expect(lock.isHeld()).toBe(true);
  expect(lock.safeTimeLeft()).toBeGreaterThan(LEASE_MS / 4);
  await untilTableHolds('renewal', lock);
  await lock.release();
  expect(await faults.bed.item('renewal')).toBeUndefined();
}, 30_000);

it('a group whose transaction was answered after its safe time is renewed, every lock, before the caller gets it', async () => {
  const network = await faults.proxied('late-group', { sdkDefaults: true });
  const client = faults.bed.client({ ownerName: 'late-group', leaseDuration: LEASE_MS, heartbeatPeriod: HEARTBEAT_MS }, network.dynamoDB);
  const reply = holdNextReply(network.dynamoDB, 'TransactWriteItemsCommand', LEASE_MS);

  const group = await client.acquireLocks(['late-a', 'late-b'], { additionalTimeToWaitForLock: LEASE_MS });

  expect(reply.held()).toBe(true);
  expect(group.isHeld()).toBe(true);
  for (const lock of group.locks) {
    expect(lock.safeTimeLeft()).toBeGreaterThan(LEASE_MS / 4);
    await untilTableHolds(lock.partitionKey, lock);
  }
  await group.release();
}, 30_000);
