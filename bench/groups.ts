/**
 * `npm run bench -- groups`: two-key transfers per second, W worker
 * processes on K keys, each transfer under the locks of two random keys;
 * `acquireLocks([a, b])` beside two `acquireLock` calls in a fixed order,
 * same workers, same keys, same lease and poll (bench/groups-worker.ts).
 * Reports transfers per second, how long each waited for its two locks,
 * DynamoDB calls per transfer, and whether two sections ever overlapped on
 * a key (they must not).
 */
import { createTables } from './acquire-clients.js';
import { startProcess, type BenchProcess } from './acquire-processes.js';
import { ACQUIRE_SETTINGS } from './acquire-release.js';
import type { GroupsWorkerConfig, TransferMethod } from './groups-worker.js';
import { percentile, type Row } from './report.js';

export interface GroupsShape {
  readonly workers: number;
  readonly keys: number;
}

export const GROUPS_SHAPES: readonly GroupsShape[] = [
  { workers: 8, keys: 4 },
  { workers: 8, keys: 16 },
];
const METHODS: readonly TransferMethod[] = ['acquireLocks', 'ordered'];
const CRITICAL_MS = 5;
const DURATION_MS = 8_000;
const STARTUP_TIMEOUT_MS = 120_000;

interface WorkerResult {
  readonly transfers: number;
  readonly waits: number[];
  readonly sections: Array<[string, number, number]>;
  readonly calls: number;
}

export async function benchGroups(endpoint: string, shapes: readonly GroupsShape[] = GROUPS_SHAPES): Promise<Row[]> {
  await createTables(endpoint);
  const rows: Row[] = [];
  for (const shape of shapes) {
    for (const method of METHODS) {
      process.stderr.write(`groups bench: ${method}, ${shape.workers} workers on ${shape.keys} keys\n`);
      rows.push(await transfers(endpoint, method, shape));
    }
  }
  return rows;
}

async function transfers(endpoint: string, method: TransferMethod, shape: GroupsShape): Promise<Row> {
  const run = `${method}-${shape.workers}on${shape.keys}-${Date.now().toString(36)}`;
  const keys = Array.from({ length: shape.keys }, (_, i) => `${run}-key-${i}`);
  const processes: BenchProcess[] = [];
  try {
    for (let i = 0; i < shape.workers; i++) {
      const config: GroupsWorkerConfig = {
        endpoint,
        method,
        keys,
        name: `${run}-worker-${i}`,
        settings: ACQUIRE_SETTINGS,
        criticalMs: CRITICAL_MS,
        durationMs: DURATION_MS,
      };
      processes.push(startProcess('./groups-worker.ts', [JSON.stringify(config)]));
    }
    await Promise.all(processes.map((p) => p.next('ready', STARTUP_TIMEOUT_MS)));
    for (const p of processes) p.send('go');
    const results = (await Promise.all(
      processes.map((p) => p.next('done', DURATION_MS + 4 * ACQUIRE_SETTINGS.leaseMs + 30_000)),
    )) as unknown as WorkerResult[];
    return summarize(method, shape, results);
  } finally {
    await Promise.all(processes.map((p) => p.kill()));
  }
}

function summarize(method: TransferMethod, shape: GroupsShape, results: readonly WorkerResult[]): Row {
  const total = results.reduce((sum, r) => sum + r.transfers, 0);
  const waits = results.flatMap((r) => r.waits).sort((a, b) => a - b);
  const byKey = new Map<string, Array<[number, number]>>();
  for (const [key, start, end] of results.flatMap((r) => r.sections)) byKey.set(key, [...(byKey.get(key) ?? []), [start, end]]);
  let overlaps = 0;
  for (const sections of byKey.values()) {
    sections.sort((x, y) => x[0] - y[0]);
    sections.forEach(([start], i) => {
      if (i > 0 && start < (sections[i - 1] as [number, number])[1]) overlaps++;
    });
  }
  return {
    method: method === 'acquireLocks' ? 'acquireLocks([a, b])' : 'acquireLock a, then b',
    workers: shape.workers,
    keys: shape.keys,
    transfersPerSecond: total / (DURATION_MS / 1000),
    p50Ms: percentile(waits, 50),
    p99Ms: percentile(waits, 99),
    callsPerTransfer: total === 0 ? null : results.reduce((sum, r) => sum + r.calls, 0) / total,
    transfers: total,
    leaseMs: ACQUIRE_SETTINGS.leaseMs,
    pollMs: ACQUIRE_SETTINGS.pollMs,
    overlaps,
  };
}
