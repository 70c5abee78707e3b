/**
 * One contention worker process: acquires its key, holds it for a short
 * critical section, releases, and again, for a fixed time after the parent
 * says "go". Reports how many critical sections it ran, how long each
 * acquisition waited, the DynamoDB calls it made, and each section's start
 * and end on the shared wall clock (for the parent's check that no two
 * holders of one key overlapped).
 *
 * Usage: acquire-worker.ts <json: WorkerConfig>
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { openClient, type ClientProcessConfig } from './acquire-clients.js';
import { lineFromParent, report, unlessStopped } from './acquire-processes.js';

export interface WorkerConfig extends ClientProcessConfig {
  readonly criticalMs: number;
  readonly durationMs: number;
}

const config = JSON.parse(process.argv[2] ?? '') as WorkerConfig;
const client = openClient(config.client, config.endpoint, config.settings, config.name);
const wallClock = (): number => performance.timeOrigin + performance.now();

// Warm up connections and code paths on a key of its own.
await (await client.acquire(`warm-up-${config.name}`)).release();
report('ready');
await lineFromParent('go');

client.calls.reset();
const stop = AbortSignal.timeout(config.durationMs);
const waits: number[] = [];
const sections: Array<[number, number]> = [];
while (!stop.aborted) {
  const asked = performance.now();
  const lock = await unlessStopped(stop, () => client.acquire(config.key, stop));
  if (lock === undefined) break;
  waits.push(performance.now() - asked);
  const start = wallClock();
  await sleep(config.criticalMs);
  sections.push([start, wallClock()]);
  await lock.release();
}
report('done', { count: sections.length, waits, sections, calls: client.calls.total() });
// dynamodb-lock-client cannot cancel a wait in progress; nothing else of this process matters any more.
process.exit(0);
