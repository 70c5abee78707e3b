/**
 * `npm run bench -- heartbeat [--locks 1000,10000,40000] [--seconds 40] [--setups default/default,default/1,1/1]`
 *
 * One process holds N locks (lease 20 s, heartbeat every 5 s) with background
 * heartbeats against the run's DynamoDB Local, for a window of `--seconds`
 * after all N are held, once per setup (heartbeat concurrency / batch size),
 * side by side: the library's defaults, the same without batches (one
 * UpdateItem per heartbeat), and 1/1, the sequential loop of the Java client.
 * Before the first row and after each one, the same DynamoDB Local is probed
 * for how many heartbeat-shaped conditional UpdateItem calls per second it
 * serves to one process making bare SDK calls: a few seconds at each of several
 * concurrencies, then the best of them for as long as a row's window. A row's
 * `serverLimitPerSecond` is the better of the sustained probes just before and
 * after it; `serverPeakPerSecond`, the best short level of the two, is shown
 * beside it.
 *
 * Every measurement runs in a fresh worker process (bench/heartbeat-worker.ts)
 * on a fresh table that it deletes afterwards; one DynamoDB Local serves the
 * whole run. Workers are killed when they overrun their budget, when this
 * process exits, and exit by themselves when this process dies.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { loadavg } from 'node:os';
import { fileURLToPath } from 'node:url';
import type { HoldResult } from './heartbeat-hold.js';
import type { LimitResult } from './heartbeat-limit.js';
import type { Row } from './report.js';

/** How the client heartbeats in one row; `undefined` is the library default. */
export interface HeartbeatSetup {
  readonly concurrency: number | undefined;
  readonly batchSize: number | undefined;
}

export interface HeartbeatBenchOptions {
  /** Locks held at once, one row per value and setup. @default [1000, 10000, 40000] */
  readonly locks?: readonly number[] | undefined;
  /** Measurement window in seconds, after all locks are held. @default 40 (two leases) */
  readonly seconds?: number | undefined;
  /** @default defaults, defaults without batches, and Java's sequential loop (1/1) */
  readonly setups?: readonly HeartbeatSetup[] | undefined;
}

export const HEARTBEAT_DEFAULTS = Object.freeze({
  locks: [1_000, 10_000, 40_000] as readonly number[],
  seconds: 40,
  setups: [
    { concurrency: undefined, batchSize: undefined },
    { concurrency: undefined, batchSize: 1 },
    { concurrency: 1, batchSize: 1 },
  ] as readonly HeartbeatSetup[],
});

const LEASE_MS = 20_000;
const HEARTBEAT_PERIOD_MS = 5_000;
const LIMIT_CONCURRENCIES = [8, 32, 128];
const LIMIT_SECONDS_PER_LEVEL = 3.5;
const LIMIT_ITEMS = 4_096;
const ACQUIRE_PARALLELISM = 64;

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const WORKER = fileURLToPath(new URL('./heartbeat-worker.ts', import.meta.url));

/** Parses `--locks 1000,10000`. */
export function parseList(text: string, name: string): number[] {
  return text.split(',').map((part) => {
    const value = Number(part.trim().replaceAll('_', ''));
    if (!Number.isSafeInteger(value) || value < 1) throw new Error(`--${name}: expected whole numbers ≥ 1 separated by commas, got "${part}"`);
    return value;
  });
}

/** Parses `--setups default/default,16/25,1/1` (heartbeat concurrency / batch size). */
export function parseSetups(text: string): HeartbeatSetup[] {
  const value = (part: string): number | undefined => (part.trim() === 'default' ? undefined : parseList(part, 'setups')[0]);
  return text.split(',').map((setup) => {
    const [concurrency, batchSize, ...rest] = setup.split('/');
    if (concurrency === undefined || batchSize === undefined || rest.length > 0) {
      throw new Error(`--setups: expected concurrency/batchSize pairs such as default/default or 1/1, got "${setup}"`);
    }
    return { concurrency: value(concurrency), batchSize: value(batchSize) };
  });
}

export async function benchHeartbeat(endpoint: string, options: HeartbeatBenchOptions = {}): Promise<Row[]> {
  const locks = options.locks ?? HEARTBEAT_DEFAULTS.locks;
  const seconds = options.seconds ?? HEARTBEAT_DEFAULTS.seconds;
  const setups = options.setups ?? HEARTBEAT_DEFAULTS.setups;

  const measureLimit = async (): Promise<LimitResult> =>
    (await runWorker(
      // One flag and its value a line.
      // prettier-ignore
      [
        'limit',
        '--endpoint', endpoint,
        '--concurrencies', LIMIT_CONCURRENCIES.join(','),
        '--seconds-per-level', String(LIMIT_SECONDS_PER_LEVEL),
        // As long as the window it is compared with, so that both average over the same pauses.
        '--sustain-seconds', String(seconds),
        '--items', String(LIMIT_ITEMS),
        '--lease', String(LEASE_MS),
      ],
      180_000,
    )) as LimitResult;

  // The machine may be busy with other work, so the limit is probed between rows: before the
  // first, after each. A row is compared with the better of the two probes around it.
  const probes: LimitResult[] = [await measureLimit()];
  const rows: Row[] = [];
  for (const n of locks) {
    for (const { concurrency, batchSize } of setups) {
      // Acquiring is slow when the locks need more heartbeats than the server gives: while the
      // heartbeats are behind, the client lets only a few acquisitions through (heartbeats first).
      const budgetMs = 120_000 + seconds * 1000 + n * 15;
      const result = (await runWorker(
        // One flag and its value a line.
        // prettier-ignore
        [
          'hold',
          '--endpoint', endpoint,
          '--locks', String(n),
          ...(concurrency === undefined ? [] : ['--concurrency', String(concurrency)]),
          ...(batchSize === undefined ? [] : ['--batch-size', String(batchSize)]),
          '--seconds', String(seconds),
          '--lease', String(LEASE_MS),
          '--period', String(HEARTBEAT_PERIOD_MS),
          '--acquire-parallelism', String(ACQUIRE_PARALLELISM),
        ],
        budgetMs,
      )) as HoldResult;
      process.stderr.write(`heartbeat bench: ${JSON.stringify(result)}\n`);
      const before = probes.at(-1) as LimitResult;
      const after = await measureLimit();
      probes.push(after);
      rows.push(holdRow(result, betterProbe(before, after), concurrency === undefined && batchSize === undefined));
    }
  }
  return [...rows, ...probes.map(probeRow)];
}

const round = (value: number, digits = 0): number => Number(value.toFixed(digits));

interface ServerLimit {
  readonly sustainedPerSecond: number;
  readonly peakPerSecond: number;
}

function betterProbe(before: LimitResult, after: LimitResult): ServerLimit {
  return {
    sustainedPerSecond: Math.max(before.sustained.callsPerSecond, after.sustained.callsPerSecond),
    peakPerSecond: Math.max(before.peakPerSecond, after.peakPerSecond),
  };
}

function holdRow(r: HoldResult, limit: ServerLimit, isDefault: boolean): Row {
  return {
    client: isDefault ? 'dynamodb-lock (default)' : 'dynamodb-lock',
    locks: r.locks,
    concurrency: r.concurrency,
    batchSize: r.batchSize,
    seconds: round(r.windowSeconds),
    // Only a lock's first heartbeat is jittered early (src/heartbeat/lock-keeper.ts): one per period after that.
    neededPerSecond: round(r.locks / (HEARTBEAT_PERIOD_MS / 1000)),
    heartbeatsPerSecond: round(r.heartbeatsPerSecond),
    serverLimitPerSecond: round(limit.sustainedPerSecond),
    ofLimitPct: round((100 * r.heartbeatsPerSecond) / limit.sustainedPerSecond, 1),
    serverPeakPerSecond: round(limit.peakPerSecond),
    ofPeakPct: round((100 * r.heartbeatsPerSecond) / limit.peakPerSecond, 1),
    p99LagMs: round(r.p99LagMs),
    maxLagMs: round(r.maxLagMs),
    locksLost: r.locksLost,
    locksLostSilently: r.locksLostSilently,
    rssBytesPerLock: round(r.rssBytesPerLock),
    heapBytesPerLock: round(r.heapBytesPerLock),
    cpuMsPerHeartbeat: round(r.cpuMsPerHeartbeat, 3),
    meanBatchSize: r.batchCalls === 0 ? '-' : round(r.meanBatchSize, 1),
  };
}

/** A server-limit probe, in the same columns: its sustained level; what does not apply is "-". */
function probeRow(probe: LimitResult): Row {
  const { sustained } = probe;
  return {
    client: 'plain SDK UpdateItem',
    locks: sustained.items,
    concurrency: sustained.concurrency,
    batchSize: 1,
    seconds: sustained.seconds,
    neededPerSecond: '-',
    heartbeatsPerSecond: round(sustained.callsPerSecond),
    serverLimitPerSecond: round(sustained.callsPerSecond),
    ofLimitPct: '-',
    serverPeakPerSecond: round(probe.peakPerSecond),
    ofPeakPct: '-',
    p99LagMs: '-',
    maxLagMs: '-',
    locksLost: '-',
    locksLostSilently: '-',
    rssBytesPerLock: '-',
    heapBytesPerLock: '-',
    cpuMsPerHeartbeat: round(sustained.cpuMsPerCall, 3),
    meanBatchSize: '-',
  };
}

// ── Worker processes ───────────────────────────────────────────────────────

const liveWorkers = new Set<ChildProcess>();

function killLiveWorkers(): void {
  for (const child of liveWorkers) child.kill('SIGKILL');
}

/** Runs one worker to completion and returns the JSON it printed; kills it after `budgetMs`. */
async function runWorker(args: readonly string[], budgetMs: number): Promise<unknown> {
  if (liveWorkers.size === 0) process.on('exit', killLiveWorkers);
  const child = spawn(
    process.execPath,
    ['--expose-gc', '--import', 'tsx', WORKER, ...args, '--budget-ms', String(budgetMs), '--watch-stdin'],
    // The SDK's Node version notice was already printed once by this process.
    { cwd: ROOT, stdio: ['pipe', 'pipe', 'inherit'], env: { ...process.env, AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED: 'true' } },
  );
  liveWorkers.add(child);
  process.stderr.write(`heartbeat bench: ${args[0]} ${args.slice(1).join(' ')} (load average ${loadavg()[0]?.toFixed(1)})\n`);
  let stdout = '';
  child.stdout?.setEncoding('utf8').on('data', (chunk: string) => (stdout += chunk));
  // The worker stops itself at its budget; this is the backstop.
  const backstop = setTimeout(() => child.kill('SIGKILL'), budgetMs + 15_000);
  try {
    const [code, signal] = await new Promise<[number | null, NodeJS.Signals | null]>((resolve, reject) => {
      child.once('error', reject);
      child.once('close', (exitCode, exitSignal) => resolve([exitCode, exitSignal]));
    });
    if (code !== 0) throw new Error(`heartbeat worker ${args[0]} failed (exit code ${code}, signal ${signal}): ${args.join(' ')}`);
    const line = stdout.trim().split('\n').at(-1);
    if (line === undefined || line === '') throw new Error(`heartbeat worker ${args[0]} printed no result`);
    return JSON.parse(line) as unknown;
  } finally {
    clearTimeout(backstop);
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
    liveWorkers.delete(child);
    if (liveWorkers.size === 0) process.off('exit', killLiveWorkers);
  }
}
