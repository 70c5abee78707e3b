/**
 * Polls come last: while a due heartbeat of a client waits unsent (every
 * heartbeat slot busy), the waits of that client send no poll at all, so
 * that a server short of capacity spends none of it on watching other
 * holders' locks while the client's own locks run late. Once the
 * heartbeats go out again, the polls resume.
 */
import { expect, it } from '@jest/globals';
import { setTimeout as sleep } from 'node:timers/promises';
import type { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { useLockTestBed } from '../../test-kit/jest/lock-test-bed-hook.js';
import { waitUntil } from '../../test-kit/test-locks.js';

const LEASE_MS = 6_000;
const HEARTBEAT_MS = 750;
const REFRESH_MS = 100;

const bed = useLockTestBed('polls-behind');

interface Stall {
  /** While set, heartbeat replies are held back. */
  holding: boolean;
  /** When the first heartbeat reply was held back. */
  firstHeldAt: number | undefined;
  /** When each GetItem (a poll) went out. */
  readonly pollsAt: number[];
}

/** Holds heartbeat replies back while `holding` is set (a server slow to answer them), and records the polls. */
function heartbeatStall(dynamoDB: DynamoDBClient): Stall {
  const stall: Stall = { holding: false, firstHeldAt: undefined, pollsAt: [] };
  dynamoDB.middlewareStack.add(
    (next, context) => async (args) => {
      if (context.commandName === 'GetItemCommand') stall.pollsAt.push(performance.now());
      const result = await next(args);
      const heartbeat = context.commandName === 'UpdateItemCommand' || context.commandName === 'BatchExecuteStatementCommand';
      if (heartbeat && stall.holding) stall.firstHeldAt ??= performance.now();
      while (heartbeat && stall.holding) await sleep(10);
      return result;
    },
    { step: 'initialize', name: 'heartbeatStall' },
  );
  return stall;
}

it('a client whose due heartbeats wait unsent sends no poll meanwhile, and polls again once they go out', async () => {
  const dynamoDB = bed.dynamoDBClient('behind');
  const stall = heartbeatStall(dynamoDB);
  // One heartbeat slot: while a heartbeat's reply is held, the next one due waits unsent.
  const settings = { leaseDuration: LEASE_MS, heartbeatPeriod: HEARTBEAT_MS, heartbeatConcurrency: 1 };
  const client = bed.client({ ownerName: 'behind', ...settings }, dynamoDB);
  const other = bed.client({ ownerName: 'other', leaseDuration: LEASE_MS, heartbeatPeriod: HEARTBEAT_MS });
  const mine = await client.acquireLock('mine');
  // Taken apart, so that their heartbeats fall due apart and not in one batch.
  await sleep(HEARTBEAT_MS / 3);
  const mineToo = await client.acquireLock('mine-too');
  const theirs = await other.acquireLock('theirs');
  const stopWaiting = new AbortController();
  const waiting = client
    .acquireLock('theirs', { refreshPeriod: REFRESH_MS, additionalTimeToWaitForLock: Infinity, signal: stopWaiting.signal })
    .catch((error: unknown) => error);
  await waitUntil('the wait polls', () => stall.pollsAt.length >= 3);

  stall.holding = true;
  await waitUntil('a heartbeat is held back', () => stall.firstHeldAt !== undefined);
  const firstHeldAt = stall.firstHeldAt ?? 0;
  // Well inside the lease less its margin, counted from the heartbeat before: the lock stays held.
  await sleep(2_000);
  const heldUntil = performance.now();
  stall.holding = false;
  await waitUntil('the wait polls again', () => stall.pollsAt.some((at) => at > heldUntil));

  // The next heartbeat falls due within a period and is overdue a twentieth of a period later; a poll admitted before may still go out.
  const overdueFrom = firstHeldAt + HEARTBEAT_MS + HEARTBEAT_MS / 20 + REFRESH_MS;
  expect(stall.pollsAt.filter((at) => at > overdueFrom && at < heldUntil)).toEqual([]);
  expect(mine.isHeld()).toBe(true);
  expect(mineToo.isHeld()).toBe(true);
  stopWaiting.abort(new Error('test over'));
  expect(await waiting).toBeInstanceOf(Error);
  await mine.release();
  await mineToo.release();
  await theirs.release();
}, 30_000);
