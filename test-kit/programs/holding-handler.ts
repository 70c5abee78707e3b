/**
 * A Lambda handler for programs/lambda-runtime.ts that holds locks through
 * work that ignores their signals (a CPU-bound step, a call without a
 * signal), so that freezing or killing its environment catches it holding
 * them. Its client lives at module scope, as a real handler's should. The
 * event: `{ keys, holdMs, bounded }`; with `bounded`, each lock is bounded
 * by the invocation's remaining time. It logs `holding` (the RVNs) once
 * every lock is acquired, and returns, without releasing anything, what
 * the locks say after the work: `isHeld()`, whether each signal aborted,
 * and with which `LockLostError` kind.
 *
 * Configured by the AWS environment, LOCK_TABLE, LEASE_MS, HEARTBEAT_MS and
 * CLOCK_BOUND_MS (the client option `clockBound`'s `maxSkew`).
 */
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { setTimeout as sleep } from 'node:timers/promises';
import { LockClient } from '../../src/index.js';

const client = new LockClient({
  dynamoDB: new DynamoDBClient({}),
  tableName: process.env['LOCK_TABLE'] ?? 'locks',
  ownerName: `environment-${process.pid}`,
  leaseDuration: Number(process.env['LEASE_MS'] ?? 2_000),
  ...(process.env['HEARTBEAT_MS'] === undefined ? {} : { heartbeatPeriod: Number(process.env['HEARTBEAT_MS']) }),
  ...(process.env['CLOCK_BOUND_MS'] === undefined ? {} : { clockBound: { maxSkew: Number(process.env['CLOCK_BOUND_MS']) } }),
});

interface HoldEvent {
  readonly keys: readonly string[];
  readonly holdMs: number;
  readonly bounded?: boolean;
}

export async function handler(event: HoldEvent, context: { getRemainingTimeInMillis(): number }): Promise<object> {
  const locks = await Promise.all(
    event.keys.map((key) =>
      client.acquireLock(key, {
        additionalTimeToWaitForLock: 30_000,
        ...(event.bounded === true ? { invocationDeadline: { remainingMs: context.getRemainingTimeInMillis() } } : {}),
      }),
    ),
  );
  console.log(JSON.stringify({ event: 'holding', rvns: locks.map((lock) => lock.recordVersionNumber) }));
  await sleep(event.holdMs);
  return {
    held: locks.map((lock) => lock.isHeld()),
    aborted: locks.map((lock) => lock.signal.aborted),
    kinds: locks.map((lock) => (lock.signal.reason as { kind?: string } | undefined)?.kind),
  };
}
