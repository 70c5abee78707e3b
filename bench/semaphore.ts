/**
 * `npm run bench -- semaphore`: W worker processes share a semaphore of N
 * permits, each running short sections under one permit over and over
 * (bench/semaphore-worker.ts). This library's semaphore (N ordinary locks)
 * beside a counter-item semaphore written as the AWS Step Functions sample
 * does it, same workers, same poll period, in the same run. Reports permits
 * granted per second, how long each grant waited, DynamoDB calls per grant,
 * the fewest grants of a worker over the most (`minMax`), calls that ended
 * without a permit (`failedCalls`: the worker counts and goes on), the
 * most sections that ran at once (never above N), and `handOverMs`, the
 * median time a place stood idle when it changed hands (bench/hand-over.ts),
 * from the end of one worker's section to the start of another's: for the
 * permits, on each permit as for a lock; for the counter item, from a
 * release that took a full count down by one to the next grant, in the
 * order the item applied them. Only from full does the next grant take the
 * place that release freed, every other taker being refused meanwhile, as a
 * lock's next holder is; both thus time a freed place until its next holder
 * runs, with the release call and the grant's reply in it.
 */
import { createTables, benchDynamoDB } from './acquire-clients.js';
import { startProcess, type BenchProcess } from './acquire-processes.js';
import { ACQUIRE_SETTINGS } from './acquire-release.js';
import { createIdKeyedTable } from '../test-kit/data-table.js';
import { counterHandOvers, lockHandOvers, medianHandOverMs, type CounterChange, type WorkerSection } from './hand-over.js';
import type { SemaphoreMethod, SemaphoreSection, SemaphoreWorkerConfig } from './semaphore-worker.js';
import { percentile, type Row } from './report.js';

const WORKERS = 32;
const PERMITS = 10;
const METHODS: readonly SemaphoreMethod[] = ['permits', 'counter'];
const CRITICAL_MS = 5;
const DURATION_MS = 10_000;
const STARTUP_TIMEOUT_MS = 180_000;

interface WorkerResult {
  readonly grants: number;
  readonly failed: number;
  readonly waits: number[];
  readonly sections: SemaphoreSection[];
  readonly calls: number;
}

export async function benchSemaphore(endpoint: string): Promise<Row[]> {
  await createTables(endpoint);
  const counterTable = `bench-semaphore-counter-${Date.now().toString(36)}`;
  const dynamoDB = benchDynamoDB(endpoint);
  try {
    await createIdKeyedTable(dynamoDB, counterTable);
  } finally {
    dynamoDB.destroy();
  }
  const rows: Row[] = [];
  for (const method of METHODS) {
    process.stderr.write(`semaphore bench: ${method}, ${WORKERS} workers on ${PERMITS} permits\n`);
    rows.push(await grants(endpoint, method, counterTable));
  }
  return rows;
}

async function grants(endpoint: string, method: SemaphoreMethod, counterTable: string): Promise<Row> {
  const semaphore = `${method}-${Date.now().toString(36)}`;
  const processes: BenchProcess[] = [];
  try {
    for (let i = 0; i < WORKERS; i++) {
      const config: SemaphoreWorkerConfig = {
        endpoint,
        method,
        semaphore,
        permits: PERMITS,
        counterTable,
        name: `${semaphore}-worker-${i}`,
        settings: ACQUIRE_SETTINGS,
        criticalMs: CRITICAL_MS,
        durationMs: DURATION_MS,
      };
      processes.push(startProcess('./semaphore-worker.ts', [JSON.stringify(config)]));
    }
    await Promise.all(processes.map((p) => p.next('ready', STARTUP_TIMEOUT_MS)));
    for (const p of processes) p.send('go');
    const results = (await Promise.all(
      processes.map((p) => p.next('done', DURATION_MS + 4 * ACQUIRE_SETTINGS.leaseMs + 30_000)),
    )) as unknown as WorkerResult[];
    return summarize(method, results);
  } finally {
    await Promise.all(processes.map((p) => p.kill()));
  }
}

/** The most sections running at one instant. */
function mostAtOnce(sections: readonly SemaphoreSection[]): number {
  const edges = sections.flatMap(({ start, end }): Array<[number, number]> => [
    [start, 1],
    [end, -1],
  ]);
  // An end before a start at the same instant: a permit handed over is not two holders.
  edges.sort((a, b) => a[0] - b[0] || a[1] - b[1]);
  let running = 0;
  let most = 0;
  for (const [, step] of edges) most = Math.max(most, (running += step));
  return most;
}

/** Each hand-over's idle time: per permit, or per release of the counter item from full. */
function handOvers(method: SemaphoreMethod, results: readonly WorkerResult[]): number[] {
  if (method === 'counter') {
    const changes = results.flatMap((r, worker) =>
      r.sections.flatMap(({ start, end, granted, released }): CounterChange[] => [
        ...(granted === undefined ? [] : [{ ...granted, kind: 'grant' as const, at: start, worker }]),
        ...(released === undefined ? [] : [{ ...released, kind: 'release' as const, at: end, worker }]),
      ]),
    );
    return counterHandOvers(changes, PERMITS);
  }
  const onPermit = new Map<string | undefined, WorkerSection[]>();
  results.forEach((r, worker) => {
    for (const { start, end, permit } of r.sections) {
      const sections = onPermit.get(permit) ?? [];
      sections.push({ start, end, worker });
      onPermit.set(permit, sections);
    }
  });
  return [...onPermit.values()].flatMap((sections) => lockHandOvers(sections.sort((a, b) => a.start - b.start)));
}

function summarize(method: SemaphoreMethod, results: readonly WorkerResult[]): Row {
  const total = results.reduce((sum, r) => sum + r.grants, 0);
  const waits = results.flatMap((r) => r.waits).sort((a, b) => a - b);
  const perWorker = results.map((r) => r.grants);
  return {
    semaphore: method === 'permits' ? `dynamodb-lock (${PERMITS} permit locks)` : 'counter item (AWS sample)',
    workers: WORKERS,
    permits: PERMITS,
    grantsPerSecond: total / (DURATION_MS / 1000),
    p50Ms: percentile(waits, 50),
    p99Ms: percentile(waits, 99),
    callsPerGrant: total === 0 ? null : results.reduce((sum, r) => sum + r.calls, 0) / total,
    handOverMs: medianHandOverMs(handOvers(method, results)),
    minMax: Math.max(...perWorker) === 0 ? null : Math.min(...perWorker) / Math.max(...perWorker),
    failedCalls: results.reduce((sum, r) => sum + r.failed, 0),
    mostAtOnce: mostAtOnce(results.flatMap((r) => r.sections)),
    pollMs: ACQUIRE_SETTINGS.pollMs,
  };
}
