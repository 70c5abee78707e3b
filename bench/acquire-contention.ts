/**
 * Scenario (b): W worker processes contend for K keys (worker i wants key
 * i mod K), each running critical sections of a few milliseconds for a
 * fixed time. Reports critical sections per second, how long acquisitions
 * waited, DynamoDB calls per section, the spread of sections between workers
 * (and, per key, the fewest a worker ran over the most, beside what it
 * would be had each run of one worker's sections gone to a uniformly random
 * worker, the most one worker ran in a row, and how long the lock stood idle
 * when it changed hands), and whether two holders of a key ever overlapped
 * (they must not).
 */
import { pollPeriodOf, type BenchVariant, type LockSettings } from './acquire-clients.js';
import { startProcess, type BenchProcess } from './acquire-processes.js';
import type { WorkerConfig } from './acquire-worker.js';
import { lockHandOvers, medianHandOverMs } from './hand-over.js';
import { acquireRow, percentile, type Row } from './report.js';

export interface ContentionShape {
  readonly workers: number;
  readonly keys: number;
  /** How long the workers run: long enough for the row's goal (fairness needs many hand-overs per worker). */
  readonly durationMs: number;
}

const CRITICAL_MS = 5;
/** Draws behind the expected min/max of a uniformly random hand-over. */
const RANDOM_TRIALS = 1_000;
const STARTUP_TIMEOUT_MS = 120_000;

interface WorkerResult {
  readonly count: number;
  readonly waits: number[];
  readonly sections: Array<[number, number]>;
  readonly calls: number;
}

export async function benchContention(
  endpoint: string,
  variant: BenchVariant,
  shape: ContentionShape,
  lockSettings: LockSettings,
): Promise<Row> {
  const { client } = variant;
  const settings: LockSettings = { ...lockSettings, turnsOn: variant.turnsOn };
  const run = `${client}-${shape.workers}on${shape.keys}-${Date.now().toString(36)}`;
  const processes: BenchProcess[] = [];
  try {
    for (let i = 0; i < shape.workers; i++) {
      const config: WorkerConfig = {
        client,
        endpoint,
        key: `${run}-key-${i % shape.keys}`,
        name: `${run}-worker-${i}`,
        settings,
        criticalMs: CRITICAL_MS,
        durationMs: shape.durationMs,
      };
      processes.push(startProcess('./acquire-worker.ts', [JSON.stringify(config)]));
    }
    await Promise.all(processes.map((p) => p.next('ready', STARTUP_TIMEOUT_MS)));
    for (const p of processes) p.send('go');
    const results = (await Promise.all(
      processes.map((p) => p.next('done', shape.durationMs + 4 * settings.leaseMs + 30_000)),
    )) as unknown as WorkerResult[];
    return summarize(variant, shape, settings, results);
  } finally {
    await Promise.all(processes.map((p) => p.kill()));
  }
}

function summarize(variant: BenchVariant, shape: ContentionShape, settings: LockSettings, results: readonly WorkerResult[]): Row {
  const total = results.reduce((sum, r) => sum + r.count, 0);
  const waits = results.flatMap((r) => r.waits).sort((a, b) => a - b);
  const counts = results.map((r) => r.count);
  const mean = total / results.length;
  // Workers i, i+K, i+2K, … shared a key: their sections must never overlap.
  let overlaps = 0;
  let longestRun = 0;
  const handOvers: number[] = [];
  /** Per key, the sections of each run one worker had in a row, from one hand-over to the next. */
  const runs: number[][] = [];
  for (let k = 0; k < shape.keys; k++) {
    const sections = results
      .flatMap((r, worker) => (worker % shape.keys === k ? r.sections.map(([start, end]) => ({ start, end, worker })) : []))
      .sort((a, b) => a.start - b.start);
    let run = 0;
    const runsOnKey: number[] = [];
    sections.forEach((section, i) => {
      const previous = sections[i - 1];
      if (previous !== undefined && section.start < previous.end) overlaps++;
      if (previous?.worker === section.worker) run++;
      else {
        if (run > 0) runsOnKey.push(run);
        run = 1;
      }
      longestRun = Math.max(longestRun, run);
    });
    if (run > 0) runsOnKey.push(run);
    runs.push(runsOnKey);
    handOvers.push(...lockHandOvers(sections));
  }
  return acquireRow({
    client: variant.label,
    scenario: `contention ${shape.workers} workers on ${shape.keys} key${shape.keys === 1 ? '' : 's'}`,
    opsPerSecond: total / (shape.durationMs / 1000),
    p50Ms: percentile(waits, 50),
    p99Ms: percentile(waits, 99),
    callsPerCycle: total === 0 ? null : results.reduce((sum, r) => sum + r.calls, 0) / total,
    leaseMs: settings.leaseMs,
    pollMs: pollPeriodOf(variant.client, settings),
    cycles: total,
    workers: shape.workers,
    keys: shape.keys,
    spreadPct: mean === 0 ? null : ((Math.max(...counts) - Math.min(...counts)) / mean) * 100,
    minMax: worstMinMax(counts, shape.keys),
    randomMinMax: randomMinMax(counts, shape.keys, runs),
    longestRun,
    handOverMs: medianHandOverMs(handOvers),
    overlaps,
  });
}

/** The lowest, over the keys, of the fewest critical sections of a worker on that key over the most (1: even). */
function worstMinMax(counts: readonly number[], keys: number): number | null {
  let worst: number | null = null;
  for (let k = 0; k < keys; k++) {
    const onKey = counts.filter((_, i) => i % keys === k);
    const most = Math.max(...onKey);
    if (most === 0) continue;
    worst = Math.min(worst ?? 1, Math.min(...onKey) / most);
  }
  return worst;
}

/**
 * The mean, over RANDOM_TRIALS draws, of `worstMinMax` had each run of
 * sections on a key (`runs[k]`: one worker's, from one hand-over to the
 * next) gone to one of the key's workers drawn uniformly at random: how
 * even this run's hand-overs would have left the shares, had none of them
 * preferred a worker.
 */
function randomMinMax(counts: readonly number[], keys: number, runs: readonly (readonly number[])[]): number | null {
  let sum = 0;
  for (let trial = 0; trial < RANDOM_TRIALS; trial++) {
    const drawn = counts.map(() => 0);
    runs.forEach((runsOnKey, k) => {
      const workers = counts.length > k ? Math.ceil((counts.length - k) / keys) : 0;
      for (const sections of runsOnKey) {
        const worker = k + keys * Math.floor(Math.random() * workers);
        drawn[worker] = (drawn[worker] ?? 0) + sections;
      }
    });
    const worst = worstMinMax(drawn, keys);
    if (worst === null) return null;
    sum += worst;
  }
  return sum / RANDOM_TRIALS;
}
