/**
 * One transfer worker process of `npm run bench -- groups`: for a fixed time
 * after the parent says "go", picks two different keys at random and runs a
 * short critical section under both locks, then releases both. `acquireLocks`
 * takes the two in one transaction; `ordered` takes them one after the other
 * with `acquireLock`, in a fixed global order (the sorted keys), as users do
 * today to avoid a deadlock. Reports transfers, their waits, the DynamoDB
 * calls, and each section per key on the shared wall clock (for the parent's
 * overlap check).
 *
 * Usage: groups-worker.ts <json: GroupsWorkerConfig>
 */
import { setTimeout as sleep } from 'node:timers/promises';
import type { Lock } from '../src/index.js';
import { ourLockClient, type LockSettings } from './acquire-clients.js';
import { lineFromParent, report, unlessStopped } from './acquire-processes.js';

export type TransferMethod = 'acquireLocks' | 'ordered';

export interface GroupsWorkerConfig {
  readonly endpoint: string;
  readonly method: TransferMethod;
  readonly keys: readonly string[];
  /** Owner name. */
  readonly name: string;
  readonly settings: LockSettings;
  readonly criticalMs: number;
  readonly durationMs: number;
}

const config = JSON.parse(process.argv[2] ?? '') as GroupsWorkerConfig;
const { calls, client } = ourLockClient(config.endpoint, config.settings, config.name);
const waiting = { refreshPeriod: config.settings.pollMs, additionalTimeToWaitForLock: Infinity };
const wallClock = (): number => performance.timeOrigin + performance.now();

/** Both locks, or throws (the signal aborted) holding neither. */
async function takeBoth(a: string, b: string, signal: AbortSignal): Promise<readonly Lock[]> {
  if (config.method === 'acquireLocks') return (await client.acquireLocks([a, b], { ...waiting, signal })).locks;
  const [first, second] = [a, b].sort() as [string, string];
  const held = await client.acquireLock(first, { ...waiting, signal });
  try {
    return [held, await client.acquireLock(second, { ...waiting, signal })];
  } catch (error) {
    await held.release();
    throw error;
  }
}

// Warm up connections and both code paths on keys of its own.
await (await client.acquireLocks([`warm-up-${config.name}-a`, `warm-up-${config.name}-b`])).release();
report('ready');
await lineFromParent('go');

calls.reset();
const stop = AbortSignal.timeout(config.durationMs);
const waits: number[] = [];
const sections: Array<[string, number, number]> = [];
while (!stop.aborted) {
  const a = config.keys[Math.floor(Math.random() * config.keys.length)] as string;
  let b = a;
  while (b === a) b = config.keys[Math.floor(Math.random() * config.keys.length)] as string;
  const asked = performance.now();
  const locks = await unlessStopped(stop, () => takeBoth(a, b, stop));
  if (locks === undefined) break;
  waits.push(performance.now() - asked);
  const start = wallClock();
  await sleep(config.criticalMs);
  const end = wallClock();
  sections.push([a, start, end], [b, start, end]);
  await Promise.all(locks.map((lock) => lock.release()));
}
report('done', { transfers: sections.length / 2, waits, sections, calls: calls.total() });
process.exit(0);
