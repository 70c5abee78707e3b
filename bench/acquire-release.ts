/**
 * `npm run bench -- acquire`: dynamodb-lock beside dynamodb-lock-client (the
 * most used Node library, on its own table) against one DynamoDB Local:
 * (a) uncontended acquire + release cycles, (b) contention of worker
 * processes, (c) takeover after the holder is SIGKILLed. Both libraries get
 * the same lease and heartbeat period; see BENCHMARKS.md for results.
 */
import { CLIENTS, createTables, type LockSettings } from './acquire-clients.js';
import { benchContention, type ContentionShape } from './acquire-contention.js';
import { benchTakeover } from './acquire-takeover.js';
import { benchUncontended } from './acquire-uncontended.js';
import type { Row } from './report.js';

export const ACQUIRE_SETTINGS: LockSettings = { leaseMs: 2_000, heartbeatMs: 500, pollMs: 200 };
const SHAPES: readonly ContentionShape[] = [
  { workers: 8, keys: 1 },
  { workers: 32, keys: 8 },
];
const TAKEOVER_RUNS = 5;

export async function benchAcquireRelease(endpoint: string, cycles: number): Promise<Row[]> {
  const settings = ACQUIRE_SETTINGS;
  await createTables(endpoint);
  const rows: Row[] = [];
  const progress = (what: string): void => void process.stderr.write(`acquire bench: ${what}\n`);
  progress(`uncontended, ${cycles} cycles per client`);
  rows.push(...(await benchUncontended(endpoint, cycles, settings)));
  for (const shape of SHAPES) {
    for (const client of CLIENTS) {
      progress(`contention, ${shape.workers} workers on ${shape.keys} keys, ${client}`);
      rows.push(await benchContention(endpoint, client, shape, settings));
    }
  }
  for (const client of CLIENTS) {
    progress(`takeover, ${TAKEOVER_RUNS} runs, ${client}`);
    rows.push(await benchTakeover(endpoint, client, TAKEOVER_RUNS, settings));
  }
  return rows;
}
