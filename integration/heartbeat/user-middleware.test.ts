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

/** How many heartbeats (a single lock's: UpdateItem) `seen` holds after holding a lock of `dynamoDB` for six heartbeat periods. */
async function heartbeatsSeenBy(dynamoDB: DynamoDBClient, seen: readonly string[]): Promise<number> {
  const client = bed.client({ ownerName: 'watched', leaseDuration: 2_000, heartbeatPeriod: HEARTBEAT_MS }, dynamoDB);
  const lock = await client.acquireLock('watched');
  await sleep(6 * HEARTBEAT_MS);
  await lock.release();
  return seen.filter((command) => command === 'UpdateItemCommand').length;
}

it('runs on heartbeats when placed at a step', async () => {
  const dynamoDB = bed.dynamoDBClient('at-step');
  const seen = recorder(dynamoDB, 'recordAtStep', { step: 'build' });
  expect(await heartbeatsSeenBy(dynamoDB, seen)).toBeGreaterThanOrEqual(3);
});

it('runs on heartbeats when placed relative to a middleware of the SDK, the only one the user added', async () => {
  const dynamoDB = bed.dynamoDBClient('after-signing');
  const seen = recorder(dynamoDB, 'recordAfterSigning', { relation: 'after', toMiddleware: 'httpSigningMiddleware' });
  expect(await heartbeatsSeenBy(dynamoDB, seen)).toBeGreaterThanOrEqual(3);
});
