/**
 * Heartbeats go out through a lane of their own (src/dynamodb/heartbeat-lane.ts),
 * yet middleware the user put on their DynamoDB client runs on them too,
 * wherever it sits in the stack: at a step, or beside one of the SDK's own
 * middleware (say, after signing, to see each attempt as it leaves).
 */
import { expect, it } from '@jest/globals';
import type { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { useLockTestBed } from '../../test-kit/jest/lock-test-bed-hook.js';
import { waitUntil } from '../../test-kit/test-locks.js';

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

/**
 * Holds a lock of a client on `dynamoDB` until it has confirmed 3 heartbeats after the first (the
 * client's `heartbeat` event, which needs no middleware); `added` runs as the first is confirmed.
 * Returns, read at one instant, those heartbeats and the ones the recorder `added` returned saw.
 */
async function heartbeatsSeen(dynamoDB: DynamoDBClient, ownerName: string, added: () => string[]): Promise<{ confirmed: number; seen: number }> {
  const client = bed.client({ ownerName, leaseDuration: 2_000, heartbeatPeriod: HEARTBEAT_MS }, dynamoDB);
  let recorded: { seen: string[]; before: number } | undefined;
  let confirmed = 0;
  // A lock heartbeats one write at a time: each confirmed after the first was sent after `added` ran, and
  // had passed every middleware before its reply.
  const listening = client.on('heartbeat', () => {
    if (recorded === undefined) {
      const seen = added();
      recorded = { seen, before: heartbeatsIn(seen) };
    } else confirmed++;
  });
  const lock = await client.acquireLock(ownerName);
  try {
    let counted = { confirmed: 0, seen: 0 };
    await waitUntil('3 heartbeats after the first', () => {
      counted = { confirmed, seen: recorded === undefined ? 0 : heartbeatsIn(recorded.seen) - recorded.before };
      return confirmed >= 3;
    });
    return counted;
  } finally {
    listening[Symbol.dispose]();
    await lock.release();
  }
}

it('runs on heartbeats when placed at a step', async () => {
  const dynamoDB = bed.dynamoDBClient('at-step');
  const seen = recorder(dynamoDB, 'recordAtStep', { step: 'build' });
  const counted = await heartbeatsSeen(dynamoDB, 'at-step', () => seen);
  expect(counted.seen).toBeGreaterThanOrEqual(counted.confirmed);
});

it('runs on heartbeats when placed relative to a middleware of the SDK, the only one the user added', async () => {
  const dynamoDB = bed.dynamoDBClient('after-signing');
  const seen = recorder(dynamoDB, 'recordAfterSigning', AFTER_SIGNING);
  const counted = await heartbeatsSeen(dynamoDB, 'after-signing', () => seen);
  expect(counted.seen).toBeGreaterThanOrEqual(counted.confirmed);
});

it('runs on heartbeats when added while the lock is held', async () => {
  const dynamoDB = bed.dynamoDBClient('added-later');
  const counted = await heartbeatsSeen(dynamoDB, 'added-later', () => recorder(dynamoDB, 'recordAddedLater', AFTER_SIGNING));
  expect(counted.seen).toBeGreaterThanOrEqual(counted.confirmed);
});
