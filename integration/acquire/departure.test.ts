/**
 * A lock's lease counts from when its write left the client, not from when
 * the SDK was handed it. With `retryMode: 'adaptive'` (README: "build your
 * DynamoDBClient as you like") a few throttled requests make the SDK's
 * client-side rate limiter hold the client's next requests back for
 * seconds; that wait used to come off the lease of the lock the held-back
 * write took, which then reached its caller with little safe time left.
 */
import { expect, it } from '@jest/globals';
import { dynamoDBErrorReply, operationOf, type RequestFault } from '../../test-kit/fault-proxy.js';
import { useFaultBed } from '../../test-kit/jest/fault-bed.js';

const faults = useFaultBed('departure');

const LEASE_MS = 10_000;
const THROTTLE: RequestFault = { action: 'respond', reply: dynamoDBErrorReply('ThrottlingException') };

it("time a write waits in the SDK's adaptive rate limiter does not come off the lease it takes", async () => {
  const network = await faults.proxied('adaptive', { sdkDefaults: true, retries: { retryMode: 'adaptive' } });
  const client = faults.bed.client({ ownerName: 'adaptive', leaseDuration: LEASE_MS, heartbeatPeriod: 2_000 }, network.dynamoDB);
  const fresh = await client.acquireLock('warm-up');
  const safeWindow = fresh.safeTimeLeft();
  await fresh.release();

  // Every read is throttled, as DynamoDB throttles a partition read too often: the limiter slows the whole client.
  network.proxy.setRule((request) => (operationOf(request) === 'GetItem' ? THROTTLE : { action: 'forward' }));
  await Promise.all(Array.from({ length: 3 }, () => client.getLock('hot').catch(() => undefined)));
  network.proxy.passThrough();

  const calledAt = performance.now();
  const lock = await client.acquireLock('held-back', { additionalTimeToWaitForLock: 0 });
  const tookMs = performance.now() - calledAt;

  // The limiter did hold the write back (else this test shows nothing)...
  expect(tookMs).toBeGreaterThan(1_000);
  // ...and the lock still has its safe time, less a round trip, not less the wait.
  expect(lock.safeTimeLeft()).toBeGreaterThan(safeWindow - 500);
  await lock.release();
}, 60_000);
