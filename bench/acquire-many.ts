/**
 * `npm run bench -- many [--locks 10000,40000] [--held 1000] [--waiting 1000] [--rounds 2]`:
 * one client takes N free locks at once with `Promise.all` over
 * `acquireLock`, while it already holds `held` others (lease 20 s, heartbeat
 * period 5 s, the defaults); with `--waiting`, each size runs again, side by
 * side, while the same client waits on that many locks held elsewhere. Each row is one fresh worker process
 * (bench/acquire-many-worker.ts) on a fresh table; rounds interleave the
 * sizes, and each row carries the load average at its start, since the
 * machine may be shared.
 *
 * Goals: 10 000 locks held within 10 s, and heartbeats at most a quarter
 * period late (`maxLagMs`) throughout, for the locks held before the burst
 * and for all of them.
 */
import { loadavg } from 'node:os';
import { startProcess } from './acquire-processes.js';
import type { ManyConfig, ManyResult } from './acquire-many-worker.js';
import type { Row } from './report.js';

export interface ManyOptions {
  readonly locks?: readonly number[] | undefined;
  readonly held?: number | undefined;
  /** Locks held elsewhere to wait on: each size runs alone, then beside that many waits. */
  readonly waiting?: number | undefined;
  readonly rounds?: number | undefined;
}

const LEASE_MS = 20_000;
const HEARTBEAT_PERIOD_MS = 5_000;

export async function benchAcquireMany(endpoint: string, options: ManyOptions = {}): Promise<Row[]> {
  const sizes = options.locks ?? [10_000, 40_000];
  const held = options.held ?? 1_000;
  const waitings = options.waiting === undefined ? [0] : [0, options.waiting];
  const rounds = options.rounds ?? 2;
  const rows: Row[] = [];
  for (let round = 1; round <= rounds; round++) {
    for (const [locks, waiting] of sizes.flatMap((size) => waitings.map((w) => [size, w] as const))) {
      const load = loadavg()[0] ?? NaN;
      const beside = `${held} held${waiting > 0 ? `, waiting on ${waiting}` : ''}`;
      process.stderr.write(`many bench: round ${round}, ${locks} locks beside ${beside} (load average ${load.toFixed(1)})\n`);
      const config: ManyConfig = { endpoint, locks, held, waiting, leaseMs: LEASE_MS, heartbeatPeriodMs: HEARTBEAT_PERIOD_MS };
      const worker = startProcess('./acquire-many-worker.ts', [JSON.stringify(config)]);
      try {
        const result = (await worker.next('done', 600_000 + 2 * LEASE_MS + locks * 10)) as unknown as ManyResult;
        if (result.firstFailure !== undefined) process.stderr.write(`many bench: first failed call: ${result.firstFailure}\n`);
        if (result.locksLost > 0) process.stderr.write(`many bench: locks lost by kind: ${JSON.stringify(result.lostByKind)}\n`);
        rows.push(manyRow(round, load, result));
      } finally {
        await worker.kill();
      }
    }
  }
  return rows;
}

function manyRow(round: number, load: number, r: ManyResult): Row {
  return {
    client: 'dynamodb-lock',
    round,
    loadAverage: Number(load.toFixed(1)),
    locks: r.locks,
    heldBefore: r.held,
    waitingOn: r.waiting,
    acquireSeconds: Number(r.acquireSeconds.toFixed(2)),
    acquiredPerSecond: Math.round(r.locks / r.acquireSeconds),
    failed:
      Object.entries(r.failures)
        .map(([name, count]) => `${count} ${name}`)
        .join(', ') || '0',
    heartbeats: r.heartbeats,
    p99LagMs: Math.round(r.p99LagMs),
    maxLagMs: Math.round(r.maxLagMs),
    maxLagHeldBeforeMs: Math.round(r.maxLagHeldBeforeMs),
    lagGoalMs: HEARTBEAT_PERIOD_MS / 4,
    locksLost: r.locksLost,
    locksLostSilently: r.locksLostSilently,
    cpuSeconds: Number(r.cpuSeconds.toFixed(1)),
    maxEventLoopDelayMs: Math.round(r.maxEventLoopDelayMs),
    waitsEnded: r.waitsEnded,
  };
}
