/**
 * One benchmark row: this process holds `locks` locks of one LockClient with
 * background heartbeats, and watches them for a window that starts once all
 * of them are held.
 *
 * - heartbeatsPerSecond: `heartbeat` events in the window / window seconds.
 * - lag: `lagMs` of those events (how late each heartbeat started after it was due).
 * - locksLost: locks whose `lost` event fired, from acquisition to the end of the window.
 * - locksLostSilently: locks whose lease ran out while the client still
 *   presented them as held: a confirmed write sent more than a lease after
 *   the previous one, a `lost` event that came after the lease had run out
 *   or without `lock.signal` aborted, a lock in state 'lost' without the
 *   event, or one not renewed for a lease at the end of the window. Lease
 *   time is `lock.lookupTime`, the monotonic time just before the lock's
 *   last confirmed write was sent.
 * - memory per lock: (after - before acquiring) / locks held at that moment,
 *   both after a full GC; the larger of right after acquisition and at the
 *   end of the window. Handles of lost locks are dropped, as an application would.
 * - cpuMsPerHeartbeat: this process's CPU time in the window / heartbeats.
 */
import { randomUUID } from 'node:crypto';
import { setMaxListeners } from 'node:events';
import { join } from 'node:path';
import { writeHeapSnapshot } from 'node:v8';
import { LockClient, type Lock } from '../src/index.js';
import { CLIENT_DEFAULTS } from '../src/settings/defaults.js';
import {
  HeartbeatCallCounter,
  LagHistogram,
  benchDynamoDBClient,
  dropTable,
  memoryAfterGC,
  sleep,
  startCpuProfile,
  type MemorySample,
} from './heartbeat-support.js';

export interface HoldOptions {
  readonly endpoint: string;
  readonly locks: number;
  /** Undefined: the library default. */
  readonly concurrency: number | undefined;
  /** Undefined: the library default. */
  readonly batchSize: number | undefined;
  readonly windowSeconds: number;
  readonly leaseDuration: number;
  readonly heartbeatPeriod: number;
  /** Acquisitions in flight at once. */
  readonly acquireParallelism: number;
  /** Give up when acquiring all locks takes longer. */
  readonly acquireTimeoutMs: number;
}

export interface HoldResult {
  readonly locks: number;
  readonly concurrency: number;
  readonly batchSize: number;
  readonly leaseMs: number;
  readonly heartbeatPeriodMs: number;
  readonly acquireSeconds: number;
  readonly windowSeconds: number;
  readonly heartbeats: number;
  readonly heartbeatsPerSecond: number;
  readonly p50LagMs: number;
  readonly p99LagMs: number;
  readonly maxLagMs: number;
  /** The largest lag in each heartbeat period of the window, in order. */
  readonly maxLagMsByPeriod: readonly number[];
  readonly locksLost: number;
  readonly locksLostBeforeWindow: number;
  readonly lostByKind: Record<string, number>;
  readonly locksLostSilently: number;
  readonly heldAtEnd: number;
  readonly heartbeatErrors: number;
  readonly heartbeatErrorsByName: Record<string, number>;
  readonly rssBytesPerLock: number;
  readonly heapBytesPerLock: number;
  /** Growth per lock of each `process.memoryUsage()` figure, after acquisition and at the end of the window. */
  readonly memoryPerLockAfterAcquire: MemorySample;
  readonly memoryPerLockAtEnd: MemorySample;
  readonly cpuMsPerHeartbeat: number;
  readonly cpuPercentOfOneCore: number;
  /** Heartbeat calls in the window: single UpdateItems, and batch calls with their mean size and share sent full. */
  readonly updateItemCalls: number;
  readonly batchCalls: number;
  readonly meanBatchSize: number;
  readonly fullBatchesPct: number;
}

const KEY_PREFIX = 'hb-';

/** With HEARTBEAT_BENCH_HEAP_SNAPSHOTS=<dir>, heap snapshots before acquiring, after, and at the end of the window. */
function snapshotHeap(moment: string): void {
  const dir = process.env.HEARTBEAT_BENCH_HEAP_SNAPSHOTS;
  if (dir !== undefined && dir !== '') writeHeapSnapshot(join(dir, `heartbeat-${process.pid}-${moment}.heapsnapshot`));
}

export async function holdLocks(options: HoldOptions): Promise<HoldResult> {
  const { locks: n, leaseDuration: lease } = options;
  const concurrency = options.concurrency ?? CLIENT_DEFAULTS.heartbeatConcurrency;
  const batchSize = options.batchSize ?? CLIENT_DEFAULTS.heartbeatBatchSize;
  const dynamoDB = benchDynamoDBClient(options.endpoint, Math.max(concurrency, options.acquireParallelism) + 16);
  const calls = new HeartbeatCallCounter(dynamoDB, batchSize);
  const tableName = `bench-heartbeat-${n}-${concurrency}-${batchSize}-${randomUUID().slice(0, 8)}`;
  const client = new LockClient({
    dynamoDB,
    tableName,
    leaseDuration: lease,
    heartbeatPeriod: options.heartbeatPeriod,
    ...(options.concurrency === undefined ? {} : { heartbeatConcurrency: options.concurrency }),
    ...(options.batchSize === undefined ? {} : { heartbeatBatchSize: options.batchSize }),
  });
  try {
    await client.createLockTable();

    // Per-lock bookkeeping in typed arrays allocated before the memory baseline,
    // so that the benchmark's own state is not charged to the library.
    const lastWrite = new Float64Array(n); // lookupTime of the last confirmed write
    const lostAt = new Float64Array(n).fill(NaN);
    const silent = new Uint8Array(n);
    // Handles of the locks still held; a lost lock's handle is dropped, as an application would.
    const held: (Lock | undefined)[] = new Array<Lock | undefined>(n);
    const lags = new LagHistogram();
    // The worst lag in each heartbeat period of the window, to tell a lasting lag from a passing one.
    const maxLagByPeriod: number[] = [];
    let windowStart = NaN;
    const indexOf = (lock: Lock): number =>
      lock.partitionKey.startsWith(KEY_PREFIX) ? Number(lock.partitionKey.slice(KEY_PREFIX.length)) : NaN;
    const markSilent = (i: number): void => {
      silent[i] = 1;
    };

    // Warm up on other keys the way the locks are acquired, heartbeated and released (same
    // parallelism, so the same sockets, compiled code and young generation), then take the
    // baseline: what is left to measure is what the held locks cost.
    const warmLocks = await inParallel(Math.min(n, 2_000), options.acquireParallelism, (i) => client.acquireLock(`warm-${i}`));
    await sleep(options.heartbeatPeriod + 1_000);
    await inParallel(warmLocks.length, options.acquireParallelism, (i) => (warmLocks[i] as Lock).release());
    warmLocks.length = 0;
    const before = await memoryAfterGC();
    snapshotHeap('before');

    let inWindow = false;
    let heartbeatsInWindow = 0;
    let heartbeatErrors = 0;
    let lost = 0;
    const lostByKind: Record<string, number> = {};
    client.on('heartbeat', ({ lock, lagMs }) => {
      const i = indexOf(lock);
      if (Number.isNaN(i)) return; // a warm-up lock
      const sentAt = lock.lookupTime;
      if (sentAt - (lastWrite[i] as number) > lease) markSilent(i); // held on across a lapsed lease
      lastWrite[i] = sentAt;
      if (inWindow) {
        heartbeatsInWindow++;
        lags.record(lagMs);
        const period = Math.floor((performance.now() - windowStart) / options.heartbeatPeriod);
        maxLagByPeriod[period] = Math.max(maxLagByPeriod[period] ?? 0, lagMs);
      }
    });
    client.on('lost', ({ lock, error }) => {
      const i = indexOf(lock);
      if (Number.isNaN(i)) return;
      const now = performance.now();
      lostAt[i] = now;
      lost++;
      lostByKind[error.kind] = (lostByKind[error.kind] ?? 0) + 1;
      if (!lock.signal.aborted || now - (lastWrite[i] as number) > lease) markSilent(i); // told too late, or not through the signal
      held[i] = undefined;
    });
    const heartbeatErrorsByName: Record<string, number> = {};
    client.on('heartbeatError', ({ error }) => {
      heartbeatErrors++;
      const name = error instanceof Error ? error.name : typeof error;
      heartbeatErrorsByName[name] = (heartbeatErrorsByName[name] ?? 0) + 1;
    });

    // Acquire all locks, `acquireParallelism` at a time; heartbeats of the first ones already run meanwhile.
    const acquireStarted = performance.now();
    const acquireDeadline = AbortSignal.timeout(options.acquireTimeoutMs);
    setMaxListeners(options.acquireParallelism + 16, acquireDeadline); // every acquisition in flight listens to it
    let next = 0;
    const acquireLoop = async (): Promise<void> => {
      for (let i = next++; i < n; i = next++) {
        const lock = await client.acquireLock(`${KEY_PREFIX}${i}`, { signal: acquireDeadline });
        lastWrite[i] = lock.lookupTime;
        if (Number.isNaN(lostAt[i])) held[i] = lock;
      }
    };
    const progress = setInterval(() => {
      process.stderr.write(
        `heartbeat bench: ${n} locks, concurrency ${concurrency}, batch size ${batchSize}: acquired ${Math.min(next, n)}, lost ${lost}\n`,
      );
    }, 10_000);
    try {
      await Promise.all(Array.from({ length: options.acquireParallelism }, acquireLoop));
    } finally {
      clearInterval(progress);
    }
    const acquireSeconds = (performance.now() - acquireStarted) / 1000;
    const lostBeforeWindow = lost;
    const afterAcquire = await memoryAfterGC();
    snapshotHeap('after-acquire');
    const heldAfterAcquire = n - lost;

    // The window.
    const stopProfile = await startCpuProfile(`heartbeat-${n}-${concurrency}-${batchSize}`);
    inWindow = true;
    calls.counting = true;
    const cpuBefore = process.cpuUsage();
    windowStart = performance.now();
    const windowEndAt = windowStart + options.windowSeconds * 1000;
    let lastReport = windowStart;
    let lastCount = 0;
    while (performance.now() < windowEndAt) {
      await sleep(Math.min(1_000, windowEndAt - performance.now()));
      const now = performance.now();
      if (now - lastReport >= 10_000) {
        const rate = (heartbeatsInWindow - lastCount) / ((now - lastReport) / 1000);
        process.stderr.write(
          `heartbeat bench: ${n} locks, concurrency ${concurrency}, batch size ${batchSize}: ${rate.toFixed(0)} heartbeats/s, max lag ${lags.max.toFixed(0)} ms, lost ${lost}\n`,
        );
        lastReport = now;
        lastCount = heartbeatsInWindow;
      }
    }
    inWindow = false;
    calls.counting = false;
    const windowEnd = performance.now();
    const cpu = process.cpuUsage(cpuBefore);
    const windowSeconds = (windowEnd - windowStart) / 1000;

    // Whatever the client still presents as held must have been renewed within its lease.
    // Counted synchronously at the end of the window, so that no event slips in between. The
    // state, not lock.signal: reading `signal` makes Node create the lock's AbortSignal (about
    // 700 bytes each on Node 20), which would then count as the library's memory below.
    let heldAtEnd = 0;
    for (let i = 0; i < n; i++) {
      const lock = held[i];
      if (lock === undefined) continue; // reported lost
      if (lock.state !== 'held' || windowEnd - (lastWrite[i] as number) > lease) markSilent(i);
      else heldAtEnd++;
    }
    const locksLost = lost;
    const locksLostSilently = silent.reduce((sum, s) => sum + s, 0);
    const lostKinds = { ...lostByKind };
    const errorsByName = { ...heartbeatErrorsByName };
    await stopProfile();
    const atEnd = await memoryAfterGC();
    snapshotHeap('at-end');
    // Growth since before acquiring, per lock held at that moment.
    const perLock = (sample: MemorySample, field: keyof MemorySample, count: number): number =>
      (sample[field] - before[field]) / Math.max(1, count);
    const allPerLock = (sample: MemorySample, count: number): MemorySample => ({
      rss: Math.round(perLock(sample, 'rss', count)),
      heapTotal: Math.round(perLock(sample, 'heapTotal', count)),
      heapUsed: Math.round(perLock(sample, 'heapUsed', count)),
      external: Math.round(perLock(sample, 'external', count)),
    });
    const cpuMs = (cpu.user + cpu.system) / 1000;

    return {
      locks: n,
      concurrency,
      batchSize,
      leaseMs: lease,
      heartbeatPeriodMs: options.heartbeatPeriod,
      acquireSeconds,
      windowSeconds,
      heartbeats: heartbeatsInWindow,
      heartbeatsPerSecond: heartbeatsInWindow / windowSeconds,
      p50LagMs: lags.percentile(50),
      p99LagMs: lags.percentile(99),
      maxLagMs: lags.max,
      maxLagMsByPeriod: Array.from(maxLagByPeriod, (lag) => Math.round(lag ?? 0)),
      locksLost,
      locksLostBeforeWindow: lostBeforeWindow,
      lostByKind: lostKinds,
      locksLostSilently,
      heldAtEnd,
      heartbeatErrors,
      heartbeatErrorsByName: errorsByName,
      rssBytesPerLock: Math.max(perLock(afterAcquire, 'rss', heldAfterAcquire), perLock(atEnd, 'rss', heldAtEnd)),
      heapBytesPerLock: Math.max(perLock(afterAcquire, 'heapUsed', heldAfterAcquire), perLock(atEnd, 'heapUsed', heldAtEnd)),
      memoryPerLockAfterAcquire: allPerLock(afterAcquire, heldAfterAcquire),
      memoryPerLockAtEnd: allPerLock(atEnd, heldAtEnd),
      cpuMsPerHeartbeat: cpuMs / Math.max(1, heartbeatsInWindow),
      cpuPercentOfOneCore: (100 * cpuMs) / (windowSeconds * 1000),
      updateItemCalls: calls.updateItemCalls,
      batchCalls: calls.batchCalls,
      meanBatchSize: calls.meanBatchSize,
      fullBatchesPct: calls.fullBatchesPct,
    };
  } finally {
    // No close(): it would release every lock, one call each. The worker exits right after; heartbeats
    // that hit the deleted table meanwhile no longer count.
    await dropTable(dynamoDB, tableName);
    dynamoDB.destroy();
  }
}

/** Runs `task(0..count-1)`, `parallelism` at a time; resolves with the results in order. */
async function inParallel<T>(count: number, parallelism: number, task: (i: number) => Promise<T>): Promise<T[]> {
  const results = new Array<T>(count);
  let next = 0;
  await Promise.all(
    Array.from({ length: Math.min(parallelism, count) }, async () => {
      for (let i = next++; i < count; i = next++) results[i] = await task(i);
    }),
  );
  return results;
}
