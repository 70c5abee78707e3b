/**
 * A lock's lease counts from when its write left the client, not from when
 * the SDK was handed it. Inside the SDK a request can wait before it leaves:
 * with `retryMode: 'adaptive'` (README: "build your DynamoDBClient as you
 * like"), a few throttled requests make the SDK's client-side rate limiter
 * hold the client's next requests back for seconds. That wait used to come
 * off the lease of the lock the held-back write took, which then reached its
 * caller with little safe time left. A middleware of the user's that waits
 * before the request is signed and sent stands in for the limiter here: it
 * holds the write back the same way, by the same amount in every SDK version.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { expect, it } from '@jest/globals';
import { useFaultBed } from '../../test-kit/jest/fault-bed.js';

const faults = useFaultBed('departure');

const LEASE_MS = 10_000;
const HELD_BACK_MS = 4_000;

it('time a write waits inside the SDK before it leaves does not come off the lease it takes', async () => {
  const network = await faults.proxied('held-back', { sdkDefaults: true });
  const client = faults.bed.client({ ownerName: 'held-back', leaseDuration: LEASE_MS, heartbeatPeriod: 2_000 }, network.dynamoDB);
  const fresh = await client.acquireLock('warm-up');
  const safeWindow = fresh.safeTimeLeft();
  await fresh.release();

  // Where the adaptive limiter waits: in the finalize step, inside the SDK's retries, before the request leaves.
  let holdBack = true;
  const sent: string[] = [];
  network.dynamoDB.middlewareStack.add(
    (next, context) => async (args) => {
      sent.push(context.commandName ?? 'unknown');
      if (holdBack && context.commandName === 'PutItemCommand') {
        holdBack = false;
        await sleep(HELD_BACK_MS);
      }
      return next(args);
    },
    { step: 'finalizeRequest', name: 'heldBackLikeTheRateLimiter' },
  );

  const calledAt = performance.now();
  const lock = await client.acquireLock('held-back', { additionalTimeToWaitForLock: 0 });
  const tookMs = performance.now() - calledAt;

  expect(holdBack).toBe(false);
  expect(tookMs).toBeGreaterThanOrEqual(HELD_BACK_MS);
  // The lock still has its safe time, less a round trip (up to three quarters of the wait on a busy machine), not less the wait.
  expect(lock.safeTimeLeft()).toBeGreaterThan(safeWindow - 0.75 * HELD_BACK_MS);
  // Nor did it take a renewal to get there: a write that reached its caller a heartbeat period late would be renewed first.
  expect(sent).toEqual(['PutItemCommand']);
  await lock.release();
}, 60_000);
