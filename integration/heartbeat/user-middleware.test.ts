/**
 * Heartbeats go out through a lane of their own (src/dynamodb/heartbeat-lane.ts),
 * yet middleware the user put on their DynamoDB client runs on them too,
 * wherever it sits in the stack: at a step, or beside one of the SDK's own
 * middleware (say, after signing, to see each attempt as it leaves).
 */
import { expect, it } from '@jest/globals';
import type { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { useLockTestBed } from '../../test-kit/jest/lock-test-bed-hook.js';
import { sleep } from '../../test-kit/test-locks.js';

const bed = useLockTestBed('user-middleware');

const HEARTBEAT_MS = 200;

type Place = { readonly step: 'build' } | { readonly relation: 'after'; readonly toMiddleware: string };

/** The commands a middleware placed at `place` saw, in order. */
function recorder(dynamoDB: DynamoDBClient, name: string, place: Place): string[] {
  const seen: string[] = [];
  const middleware = (next: (args: unknown) => Promise<unknown>, context: { commandName?: string }) => (args: unknown) => {
    seen.push(context.commandName ?? '?');
    return next(args);
  };
  if ('step' in place) dynamoDB.middlewareStack.add(middleware as never, { ...place, name });
  else dynamoDB.middlewareStack.addRelativeTo(middleware as never, { ...place, name });
  return seen;
}

const AFTER_SIGNING: Place = { relation: 'after', toMiddleware: 'httpSigningMiddleware' };

/** The heartbeats (a single lock's: UpdateItem) in `seen`. */
const heartbeatsIn = (seen: readonly string[]): number => seen.filter((command) => command === 'UpdateItemCommand').length;

/** Holds a lock of a client on `dynamoDB` for `periods` heartbeat periods; `meanwhile` runs two periods in. */
async function holdLock(dynamoDB: DynamoDBClient, ownerName: string, periods: number, meanwhile = (): void => undefined): Promise<void> {
  const client = bed.client({ ownerName, leaseDuration: 2_000, heartbeatPeriod: HEARTBEAT_MS }, dynamoDB);
  const lock = await client.acquireLock(ownerName);
  await sleep(2 * HEARTBEAT_MS);
  meanwhile();
  await sleep((periods - 2) * HEARTBEAT_MS);
  await lock.release();
}

it('runs on heartbeats when placed at a step', async () => {
  const dynamoDB = bed.dynamoDBClient('at-step');
  const seen = recorder(dynamoDB, 'recordAtStep', { step: 'build' });
  await holdLock(dynamoDB, 'at-step', 6);
  expect(heartbeatsIn(seen)).toBeGreaterThanOrEqual(3);
});

it('runs on heartbeats when placed relative to a middleware of the SDK, the only one the user added', async () => {
  const dynamoDB = bed.dynamoDBClient('after-signing');
  const seen = recorder(dynamoDB, 'recordAfterSigning', AFTER_SIGNING);
  await holdLock(dynamoDB, 'after-signing', 6);
  expect(heartbeatsIn(seen)).toBeGreaterThanOrEqual(3);
});

it('runs on heartbeats when added while the lock is held', async () => {
  const dynamoDB = bed.dynamoDBClient('added-later');
  let seen: string[] = [];
  await holdLock(dynamoDB, 'added-later', 8, () => (seen = recorder(dynamoDB, 'recordAddedLater', AFTER_SIGNING)));
  expect(heartbeatsIn(seen)).toBeGreaterThanOrEqual(3);
});
