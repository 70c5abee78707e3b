/**
 * Scenario (c): a holder process is SIGKILLed while a waiter (in this
 * process) is already waiting for its lock; measured is the time from the
 * kill until the waiter holds the lock, beside the lease and the waiter's
 * poll period. The kill comes at a random moment of the wait, so it falls
 * anywhere between two heartbeats.
 *
 * Bound: the holder's last RVN was written before the kill; a waiter that
 * reads at least every poll period sees it within one poll (plus a read) and
 * takes over one lease later. dynamodb-lock should so finish within
 * lease + poll + 100 ms in every run; dynamodb-lock-client re-reads only a
 * lease after each read, so it can need up to two leases.
 */
import { randomInt } from 'node:crypto';
import { openClient, pollPeriodOf, type ClientName, type ClientProcessConfig, type LockSettings } from './acquire-clients.js';
import { startProcess } from './acquire-processes.js';
import { acquireRow, percentile, type Row } from './report.js';

const STARTUP_TIMEOUT_MS = 60_000;

export async function benchTakeover(endpoint: string, client: ClientName, runs: number, settings: LockSettings): Promise<Row> {
  const takeovers: number[] = [];
  let waiterCalls = 0;
  const waiter = openClient(client, endpoint, settings, `takeover-waiter-${client}`);
  try {
    await (await waiter.acquire(`takeover-warm-up-${client}`)).release();
    for (let run = 0; run < runs; run++) {
      const key = `takeover-${client}-${Date.now().toString(36)}-${run}`;
      const config: ClientProcessConfig = { client, endpoint, key, name: `takeover-holder-${client}-${run}`, settings };
      const holder = startProcess('./acquire-holder.ts', [JSON.stringify(config)]);
      try {
        await holder.next('acquired', STARTUP_TIMEOUT_MS);
        const callsBefore = waiter.calls.total();
        const giveUp = AbortSignal.timeout(30_000 + 3 * settings.leaseMs);
        const acquiring = waiter.acquire(key, giveUp);
        acquiring.catch(() => undefined);
        // Already waiting for a while, through a few heartbeats, when the holder dies.
        await new Promise((resolve) => setTimeout(resolve, randomInt(settings.leaseMs / 2, (3 * settings.leaseMs) / 2)));
        const killedAt = performance.now();
        await holder.kill();
        const lock = await acquiring;
        takeovers.push(performance.now() - killedAt);
        waiterCalls += waiter.calls.total() - callsBefore;
        await lock.release();
      } finally {
        await holder.kill();
      }
    }
  } finally {
    await waiter.close();
  }
  const sorted = [...takeovers].sort((a, b) => a - b);
  return acquireRow({
    client,
    scenario: 'takeover after SIGKILL',
    p50Ms: percentile(sorted, 50),
    p99Ms: percentile(sorted, 99),
    callsPerCycle: waiterCalls / runs,
    takeoverMs: percentile(sorted, 50),
    maxTakeoverMs: sorted[sorted.length - 1] ?? null,
    leaseMs: settings.leaseMs,
    pollMs: pollPeriodOf(client, settings),
    cycles: runs,
  });
}
