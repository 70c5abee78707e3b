/**
 * Child process of `npm run bench -- many`: one client takes N free locks at
 * once (`Promise.all` over `acquireLock`, as README shows) while it already
 * holds `held` others, and keeps them all for one lease after the last is
 * taken. With `waiting`, it also waits (`additionalTimeToWaitForLock:
 * Infinity`, polling every `refreshPeriod`, the default) on that many locks
 * another client of the same process holds, from just before the burst to
 * the end. Reports how long taking them took, and how late heartbeats
 * started after they were due (`lagMs` of the `heartbeat` event), from the
 * start of the burst to the end of that lease: for the locks held before it,
 * and for all.
 *
 * Usage: acquire-many-worker.ts <json: ManyConfig>
 */
import { randomUUID } from 'node:crypto';
import { setMaxListeners } from 'node:events';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { LockClient, type Lock } from '../src/index.js';
import { report } from './acquire-processes.js';
import { LagHistogram, dropTable, sleep } from './heartbeat-support.js';

export interface ManyConfig {
  readonly endpoint: string;
  /** Free locks taken at once. */
  readonly locks: number;
  /** Locks held (and heartbeating) before the burst starts. */
  readonly held: number;
  readonly leaseMs: number;
  readonly heartbeatPeriodMs: number;
  /** Locks held by another client that this one waits on meanwhile. */
  readonly waiting: number;
}

export interface ManyResult {
  readonly locks: number;
  readonly held: number;
  readonly waiting: number;
  readonly acquireSeconds: number;
  /** Calls that rejected, by error name (none expected: the locks are free). */
  readonly failures: Record<string, number>;
  readonly firstFailure: string | undefined;
  readonly heartbeats: number;
  readonly heartbeatsOfHeldBefore: number;
  readonly p99LagMs: number;
  readonly maxLagMs: number;
  readonly maxLagHeldBeforeMs: number;
  readonly locksLost: number;
  readonly lostByKind: Record<string, number>;
  /** Locks the client presented as held whose last confirmed write was more than a lease old. */
  readonly locksLostSilently: number;
  readonly cpuSeconds: number;
  /** The longest the event loop was blocked meanwhile: a heartbeat lag near it was the client's CPU, not its scheduling. */
  readonly maxEventLoopDelayMs: number;
  /** Waits that ended before the run did (none expected: the other client keeps its locks). */
  readonly waitsEnded: number;
}

const config = JSON.parse(process.argv[2] ?? '') as ManyConfig;
// The client README tells users to build: the SDK's defaults (50 sockets, no timeouts of its own).
const dynamoDB = new DynamoDBClient({
  endpoint: config.endpoint,
  region: 'us-east-1',
  credentials: { accessKeyId: 'bench', secretAccessKey: 'bench' },
});
const tableName = `bench-many-${config.locks}-${randomUUID().slice(0, 8)}`;
const client = new LockClient({ dynamoDB, tableName, leaseDuration: config.leaseMs, heartbeatPeriod: config.heartbeatPeriodMs });

/** Waits on `count` locks another client (its own DynamoDBClient) holds; `stop()` ends them and tells how many had ended before. */
async function startWaits(count: number): Promise<{ stop: () => Promise<number> }> {
  if (count === 0) return { stop: () => Promise.resolve(0) };
  const elsewhere = new LockClient({
    dynamoDB: new DynamoDBClient({
      endpoint: config.endpoint,
      region: 'us-east-1',
      credentials: { accessKeyId: 'bench', secretAccessKey: 'bench' },
    }),
    tableName,
    ownerName: 'elsewhere',
    leaseDuration: config.leaseMs,
    heartbeatPeriod: config.heartbeatPeriodMs,
  });
  await Promise.all(Array.from({ length: count }, (_, i) => elsewhere.acquireLock(`theirs-${i}`)));
  const stopped = new AbortController();
  setMaxListeners(count + 16, stopped.signal);
  let ended = 0;
  const waits = Array.from({ length: count }, (_, i) =>
    client.acquireLock(`theirs-${i}`, { additionalTimeToWaitForLock: Infinity, signal: stopped.signal }).then(
      () => ended++,
      () => (stopped.signal.aborted ? undefined : ended++),
    ),
  );
  return {
    stop: async () => {
      stopped.abort();
      await Promise.all(waits);
      return ended;
    },
  };
}

try {
  await client.createLockTable();
  // Warm up the sockets and code paths on keys of their own.
  const warm = await Promise.all(Array.from({ length: 200 }, (_, i) => client.acquireLock(`warm-${i}`)));
  await Promise.all(warm.map((lock) => lock.release()));

  const before = await Promise.all(Array.from({ length: config.held }, (_, i) => client.acquireLock(`held-${i}`)));
  const heldBefore = new Set<Lock>(before);
  // Into their heartbeats: the first ones are due within a period.
  await sleep(config.heartbeatPeriodMs);

  const all = new LagHistogram();
  let heartbeatsOfHeldBefore = 0;
  let maxLagHeldBefore = 0;
  let lost = 0;
  const lastWrite = new Map<Lock, number>();
  client.on('heartbeat', ({ lock, lagMs }) => {
    all.record(lagMs);
    lastWrite.set(lock, lock.lookupTime);
    if (!heldBefore.has(lock)) return;
    heartbeatsOfHeldBefore++;
    maxLagHeldBefore = Math.max(maxLagHeldBefore, lagMs);
  });
  const lostByKind: Record<string, number> = {};
  client.on('lost', ({ error }) => {
    lost++;
    lostByKind[error.kind] = (lostByKind[error.kind] ?? 0) + 1;
  });

  const waits = await startWaits(config.waiting);
  const loopDelay = monitorEventLoopDelay({ resolution: 10 });
  loopDelay.enable();
  const cpuBefore = process.cpuUsage();
  const started = performance.now();
  const giveUp = AbortSignal.timeout(600_000);
  setMaxListeners(config.locks + 16, giveUp);
  const outcomes = await Promise.allSettled(
    Array.from({ length: config.locks }, (_, i) => client.acquireLock(`burst-${i}`, { signal: giveUp })),
  );
  const acquireSeconds = (performance.now() - started) / 1000;
  const taken: Lock[] = [];
  const failures: Record<string, number> = {};
  let firstFailure: string | undefined;
  for (const outcome of outcomes) {
    if (outcome.status === 'fulfilled') taken.push(outcome.value);
    else {
      const name = outcome.reason instanceof Error ? outcome.reason.name : String(outcome.reason);
      firstFailure ??= `${String(outcome.reason)} (cause: ${String((outcome.reason as { cause?: unknown }).cause)})`;
      failures[name] = (failures[name] ?? 0) + 1;
    }
  }
  for (const lock of [...before, ...taken]) if (!lastWrite.has(lock)) lastWrite.set(lock, lock.lookupTime);

  // One lease after the last acquisition: every lock taken has had its heartbeats by then.
  await sleep(config.leaseMs);
  const end = performance.now();
  let lostSilently = 0;
  for (const [lock, writtenAt] of lastWrite) if (lock.state === 'held' && end - writtenAt > config.leaseMs) lostSilently++;
  const cpu = process.cpuUsage(cpuBefore);
  loopDelay.disable();
  const waitsEnded = await waits.stop();

  const result: ManyResult = {
    locks: config.locks,
    held: config.held,
    waiting: config.waiting,
    acquireSeconds,
    failures,
    firstFailure,
    heartbeats: all.count,
    heartbeatsOfHeldBefore,
    p99LagMs: all.percentile(99),
    maxLagMs: all.max,
    maxLagHeldBeforeMs: maxLagHeldBefore,
    locksLost: lost,
    lostByKind,
    locksLostSilently: lostSilently,
    cpuSeconds: (cpu.user + cpu.system) / 1e6,
    maxEventLoopDelayMs: loopDelay.max / 1e6,
    waitsEnded,
  };
  report('done', result);
} finally {
  // No close(): it would release every lock, one call each; dropping the table ends them all.
  await dropTable(dynamoDB, tableName);
  dynamoDB.destroy();
}
process.exit(0);
