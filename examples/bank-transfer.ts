/**
 * Transfers between accounts, each under the locks of both accounts taken
 * together: all or none, in one DynamoDB transaction, and never one held
 * while waiting for the other, in whatever order the accounts come. Run it
 * in as many processes as you like; no account is in two transfers at once.
 * Each transfer is logged as a JSON line.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { lockClient, shutdownSignal } from './connect.js';

const accounts = Array.from({ length: Number(process.env['ACCOUNTS'] ?? 5) }, (_, i) => `account-${i}`);
const locks = lockClient({ leaseDuration: 10_000, heartbeatPeriod: 2_500 });
const shutdown = shutdownSignal();

/** The work a transfer needs; it stops as soon as `signal` aborts. */
async function moveMoney(from: string, to: string, options: { signal: AbortSignal }): Promise<void> {
  const start = performance.timeOrigin + performance.now();
  await sleep(20 + Math.random() * 60, undefined, options);
  console.log(JSON.stringify({ pid: process.pid, keys: [from, to], from: start, to: performance.timeOrigin + performance.now() }));
}

async function transferOnce(from: string, to: string): Promise<void> {
  await using transfer = await locks.acquireLocks([from, to], { additionalTimeToWaitForLock: Infinity, signal: AbortSignal.timeout(30_000) });
  transfer.throwIfLost(); // every lock still held, right before the effect
  await moveMoney(from, to, { signal: transfer.signal }); // aborts when any lock is lost
}

while (!shutdown.aborted) {
  const [from, to] = [...accounts].sort(() => Math.random() - 0.5);
  await transferOnce(from!, to!).catch((error: unknown) => {
    if (!shutdown.aborted) console.error(`transfer ${from} -> ${to}: ${String(error)}`);
  });
}
await locks.close();
