/**
 * A scheduler that runs on every replica, of which only the leader fires
 * jobs. Start it on as many machines as you like: one leads; when it stops
 * (SIGTERM) it resigns and another leads at its next read; when it dies,
 * another leads about one lease later.
 */
import { hostname } from 'node:os';
import { setTimeout as sleep } from 'node:timers/promises';
import { LeaderElection } from 'dynamodb-lock';
import { lockClient, shutdownSignal } from './connect.js';

const name = process.env['REPLICA_NAME'] ?? `${hostname()}:${process.pid}`;
const tickMs = Number(process.env['SCHEDULER_TICK_MS'] ?? 1_000);

const locks = lockClient({ leaseDuration: 10_000, heartbeatPeriod: 2_500 });
const election = new LeaderElection(locks, 'scheduler', { data: JSON.stringify({ name }) });
const shutdown = shutdownSignal();

async function runDueJobs(signal: AbortSignal): Promise<void> {
  console.log(`${name}: running due jobs`);
  await sleep(tickMs, undefined, { signal }).catch(() => undefined);
}

try {
  await election.lead(
    async (leading, leadership) => {
      console.log(`${name}: leads`);
      while (!leading.aborted) {
        leadership.throwIfLost(); // right before the act only the leader may do
        await runDueJobs(leading);
      }
      console.log(`${name}: stops leading`);
    },
    { signal: shutdown },
  );
} catch (error) {
  if (!shutdown.aborted) throw error; // a shutdown while campaigning ends the campaign with its reason
} finally {
  await locks.close(); // resigns, if still leading, and stops heartbeats
}
console.log(`${name}: stopped`);
