/**
 * A pool of workers over many keys (one per tenant, say): each worker takes
 * a key nobody holds, works on it, releases it and takes another. Run it in
 * as many processes as you like; a key is worked on by one worker at a time
 * across all of them. Each piece of work is logged as a JSON line.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import type { Lock } from 'dynamodb-lock';
import { lockClient, shutdownSignal } from './connect.js';

const keys = Array.from({ length: Number(process.env['TENANTS'] ?? 20) }, (_, i) => `tenant-${i}`);
const workers = Number(process.env['WORKERS'] ?? 4);

const locks = lockClient({ leaseDuration: 10_000, heartbeatPeriod: 2_500 });
const shutdown = shutdownSignal();

/** The work one key needs; it stops as soon as `signal` aborts. */
async function work(key: string, lock: Lock, signal: AbortSignal): Promise<void> {
  await sleep(20 + Math.random() * 60, undefined, { signal });
  lock.throwIfLost(); // right before the effect the lock guards
}

async function worker(id: number): Promise<void> {
  while (!shutdown.aborted) {
    const key = keys[Math.floor(Math.random() * keys.length)]!;
    if (locks.hasLock(key)) continue; // another worker of this process has it
    const lock = await locks.tryAcquireLock(key, { shouldSkipBlockingWait: true });
    if (lock === undefined) {
      await sleep(10).catch(() => undefined); // someone elsewhere has it: try another key
      continue;
    }
    const from = performance.timeOrigin + performance.now();
    try {
      await work(key, lock, AbortSignal.any([lock.signal, shutdown]));
      const to = performance.timeOrigin + performance.now();
      console.log(JSON.stringify({ pid: process.pid, worker: id, key, from, to }));
    } catch (error) {
      if (!shutdown.aborted) console.error(`worker ${id}: ${key}: ${String(error)}`);
    } finally {
      await lock.release({ bestEffort: true }); // nobody releases it again: if this fails, it lapses after its lease
    }
  }
}

await Promise.all(Array.from({ length: workers }, (_, id) => worker(id)));
await locks.close();
