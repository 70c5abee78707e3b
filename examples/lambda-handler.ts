/**
 * An AWS Lambda handler that runs one job at a time per key across all its
 * concurrent invocations. The lock client lives at module scope, so every
 * invocation an execution environment serves shares it (and its sockets);
 * each invocation's lock is bounded by the invocation's remaining time, so a
 * holder stopped at its timeout passes the lock on about then instead of a
 * whole lease later; and the job's effect is a guarded write, which commits
 * only while the lock is this invocation's. docs/serverless.md explains the
 * settings.
 *
 * DATA_TABLE (default "jobs", partition key `id`) holds the jobs' results.
 */
import type { Lock } from 'dynamodb-lock';
import { setTimeout as sleep } from 'node:timers/promises';
import { lockClient } from './connect.js';

// Module scope: created once per execution environment, reused by every invocation it serves.
const locks = lockClient({ leaseDuration: Number(process.env['LEASE_MS'] ?? 30_000) });
const dataTable = process.env['DATA_TABLE'] ?? 'jobs';

/** What Lambda passes as the handler's second argument, as far as this handler uses it. */
interface LambdaContext {
  getRemainingTimeInMillis(): number;
}

interface JobEvent {
  readonly job: string;
  /** How long the work takes, in ms. */
  readonly workMs?: number;
}

export async function handler(event: JobEvent, context: LambdaContext): Promise<{ job: string; done: true }> {
  const lock = await locks.acquireLock(event.job, {
    // Every write of the lock states a lease that ends by this invocation's timeout (plus Lambda's 2 s to kill it).
    invocationDeadline: { remainingMs: context.getRemainingTimeInMillis() },
    // Wait as long as the invocation may: the call gives up by itself a safety margin before the timeout.
    additionalTimeToWaitForLock: Infinity,
  });
  console.log(JSON.stringify({ event: 'locked', job: event.job, rvn: lock.recordVersionNumber }));
  try {
    await sleep(event.workMs ?? 100, undefined, { signal: lock.signal }); // the work; it stops when the lock is lost
    await recordRun(lock, event.job);
    return { job: event.job, done: true };
  } finally {
    await lock.release({ bestEffort: true });
  }
}

/** The effect: counts the job's runs, committed only while the lock is still this invocation's. */
async function recordRun(lock: Lock, job: string): Promise<void> {
  await lock.transactWrite([
    {
      Update: {
        TableName: dataTable,
        Key: { id: { S: job } },
        UpdateExpression: 'ADD #runs :one',
        ExpressionAttributeNames: { '#runs': 'runs' },
        ExpressionAttributeValues: { ':one': { N: '1' } },
      },
    },
  ]);
}
