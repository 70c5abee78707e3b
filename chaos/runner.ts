/**
 * One chaos run: a lock table, a fault proxy on a seeded schedule in front of
 * DynamoDB Local, worker processes contending for a few keys through it, a
 * driver killing and pausing them; then the checker's verdict on the log and
 * a final scan of the table. Everything it starts is stopped before it
 * returns, also when it fails.
 */
import { appendFileSync } from 'node:fs';
import { mkdtemp, readdir, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { setTimeout as sleep } from 'node:timers/promises';
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { FaultProxy } from '../test-kit/fault-proxy.js';
import { LockClient } from '../src/index.js';
import { permitKeys as permitKeysOf } from '../src/semaphore/permit-keys.js';
import { checkChaosLog, type CheckReport } from './checker.js';
import { ChaosDriver, type WorkerCrash, type WorkerIdentity } from './driver.js';
import type { ChaosEvent } from './events.js';
import { createCounterTable, scanCounters, summarizeWrites, type FencedReport } from './fenced-check.js';
import type { FencedMode } from './fenced-writes.js';
import { seededFaultSchedule, type NetworkFaultKind } from './fault-schedule.js';
import { scanLockTable, type ScanReport } from './final-scan.js';
import { checkLoad, PROXY_STALLS, type LoadCheckReport, type SlowReply } from './load-check.js';
import { watchStalls } from './stall-watch.js';
import { keysOf, senderOf } from './load-keys.js';
import { ServerProbe, type ServerProbeReport } from './server-probe.js';
import { loadFaultSchedule, type LoadFaultCounts } from './load-faults.js';
import { loadViolations } from './load-run.js';
import type { LoadShape, LoadWorkerConfig } from './load-worker.js';
import type { WorkerConfig } from './worker.js';
import type { RetryMode } from './worker-dynamodb.js';

export interface ChaosOptions {
  /** DynamoDB Local, `http://127.0.0.1:<port>`. */
  readonly endpoint: string;
  readonly seconds: number;
  readonly seed: number;
  readonly workers: number;
  readonly keys: number;
  readonly leaseMs: number;
  readonly heartbeatMs: number;
  /** The acquirers' refreshPeriod: how often a waiter reads the item. */
  readonly pollMs: number;
  /** Takeover allowance beyond lease + poll; see RELIABILITY.md. */
  readonly marginMs: number;
  /** The workers' SDK `maxAttempts`; none for the SDK's own default (README's client). */
  readonly maxAttempts: number | undefined;
  /** The workers' SDK `retryMode`; none for the SDK's own default (standard). */
  readonly retryMode?: RetryMode | undefined;
  /**
   * A load run (chaos/load-worker.ts): each worker keeps hundreds of locks
   * while it asks for many others, hot keys are throttled, and the server is
   * now and then saturated on purpose. None: the plain run (chaos/worker.ts).
   */
  readonly load?: LoadShape | undefined;
  /**
   * `--groups`: this many more workers, each taking 2–4 of the keys at once
   * with acquireLocks, among the single-key ones (plain runs only).
   */
  readonly groupWorkers?: number | undefined;
  /**
   * `--semaphores`: this many more workers, each taking 1 to `permits` − 1
   * permits at once of one semaphore of `permits`, among the single-key ones,
   * which also take the permits' keys as locks (plain runs only).
   */
  readonly semaphore?: { readonly workers: number; readonly permits: number } | undefined;
  /**
   * `--gc`: one more worker runs collectAbandoned passes back to back
   * (chaos/gc-worker.ts), faulted as the others are (plain runs only).
   */
  readonly gc?: boolean | undefined;
  /** Milliseconds between process faults. */
  readonly faultGapMs: readonly [number, number];
  /** Keep the JSON-lines logs (their directory is in the report) instead of deleting them. */
  readonly keepLogs: boolean;
  /**
   * Each act also writes the key's counter item, some of them late on purpose
   * (chaos/fenced-writes.ts): with guarded writes, or (`unguarded`, to show
   * what the guard prevents) plain ones. None: acts write nothing.
   */
  readonly fenced?: FencedMode | undefined;
  /** Aborting ends the run early (Ctrl-C); the run is still checked. */
  readonly signal?: AbortSignal;
}

const LOAD_WORKER_SCRIPT = fileURLToPath(new URL('./load-worker.ts', import.meta.url));

export const DEFAULT_CHAOS: Omit<ChaosOptions, 'endpoint'> = {
  seconds: 30,
  seed: 1,
  workers: 6,
  keys: 2,
  leaseMs: 1_500,
  heartbeatMs: 300,
  pollMs: 250,
  marginMs: 1_500,
  maxAttempts: undefined,
  faultGapMs: [500, 2_000],
  keepLogs: false,
};

/** A `--groups` run's own defaults: groups of up to 4 keys need 4 keys to choose from. */
export const GROUP_DEFAULTS = { keys: 4, groupWorkers: 3 } as const;

/** A `--semaphores` run's own defaults: 4 semaphore workers and 3 single-key ones on a semaphore of 3 permits. */
export const SEMAPHORE_DEFAULTS = { workers: 3, semaphore: { workers: 4, permits: 3 } } as const;

/** The semaphore of a `--semaphores` run. */
const SEMAPHORE_NAME = 'sem';

export interface ChaosReport extends Partial<LoadCheckReport> {
  readonly options: Omit<ChaosOptions, 'endpoint' | 'signal'>;
  readonly seconds: number;
  readonly requests: number;
  readonly networkFaults: Record<NetworkFaultKind, number>;
  readonly check: CheckReport;
  readonly crashes: WorkerCrash[];
  readonly scan: ScanReport;
  /** `--fenced` runs only. */
  readonly fenced?: FencedReport;
  /** `--load` runs only (with `heldLocksLost`, `acquisitionsOverdue`, …): the faults only they inject. */
  readonly loadFaults?: LoadFaultCounts;
  /** `--load` runs only: how often the server was slow to answer the runner's own probe. */
  readonly serverProbe?: ServerProbeReport;
  readonly violations: string[];
  readonly logDir: string | undefined;
}

async function readEvents(logDir: string): Promise<ChaosEvent[]> {
  const events: ChaosEvent[] = [];
  for (const file of await readdir(logDir)) {
    const text = await readFile(join(logDir, file), 'utf8');
    // A worker killed mid-write may leave a partial last line: it logged nothing it acted on.
    for (const line of text.split('\n')) {
      if (line === '') continue;
      try {
        events.push(JSON.parse(line) as ChaosEvent);
      } catch {
        // torn final line of a killed worker
      }
    }
  }
  return events;
}

async function createTable(endpoint: string, tableName: string, fencingTableName: string | undefined): Promise<void> {
  const dynamoDB = new DynamoDBClient({ endpoint, region: 'us-east-1', credentials: { accessKeyId: 'chaos', secretAccessKey: 'chaos' } });
  const client = new LockClient({
    dynamoDB,
    tableName,
    backgroundHeartbeats: false,
    ...(fencingTableName === undefined ? {} : { fencingTableName }),
  });
  try {
    await client.createLockTable();
    if (fencingTableName !== undefined) await client.createFencingTable();
  } finally {
    await client.close().catch(() => undefined);
    dynamoDB.destroy();
  }
}

export async function runChaos(options: ChaosOptions): Promise<ChaosReport> {
  const { endpoint, signal, ...settings } = options;
  const tableName = `chaos-${options.seed}-${Date.now().toString(36)}`;
  // Guarded runs fence too: every acquisition gets a token, and the counter items check that tokens only grow.
  const fencingTable = options.fenced === 'guarded' ? `${tableName}-fencing` : undefined;
  await createTable(endpoint, tableName, fencingTable);
  const dataTable = `${tableName}-data`;
  if (options.fenced !== undefined) await createCounterTable(endpoint, dataTable);
  const logDir = await mkdtemp(join(tmpdir(), 'dynamodb-lock-chaos-'));
  const load = options.load;
  const loadSchedule = load === undefined ? undefined : loadFaultSchedule(options.seed, options.leaseMs, options.seconds);
  const schedule = loadSchedule ?? seededFaultSchedule(options.seed);
  const proxy = await FaultProxy.start(endpoint);
  proxy.setRule(schedule.rule);
  const slowReplies: SlowReply[] = [];
  if (load !== undefined) {
    proxy.onServerReply = (request, ms, answered) => {
      if (ms <= options.heartbeatMs / 4) return;
      const atNs = process.hrtime.bigint() - BigInt(Math.round(ms * 1e6));
      slowReplies.push({ atNs, ms, answered, sender: senderOf(request), keys: keysOf(request) });
    };
  }
  const common = {
    endpoint: proxy.endpoint,
    tableName,
    leaseMs: options.leaseMs,
    heartbeatMs: options.heartbeatMs,
    pollMs: options.pollMs,
    maxAttempts: options.maxAttempts,
    retryMode: options.retryMode,
  };
  const groupWorkers = load === undefined ? (options.groupWorkers ?? 0) : 0;
  const semaphore = load === undefined ? options.semaphore : undefined;
  const semaphoreWorkers = semaphore?.workers ?? 0;
  const lockKeys = Array.from({ length: options.keys }, (_, i) => `key-${i + 1}`);
  // Single-key workers also take the permits' keys as plain locks, as a client of another language joins a semaphore.
  const permitKeys = semaphore === undefined ? [] : permitKeysOf(SEMAPHORE_NAME, semaphore.permits, undefined).map((key) => key.partitionKey);
  const lockers = options.workers + groupWorkers + semaphoreWorkers;
  const gc = load === undefined && options.gc === true;
  const driverOptions = {
    workers: lockers + (gc ? 1 : 0),
    // The gc is paused, never killed: a run in which it is killed before its first pass ends would prove nothing of it.
    pauseOnlySlot: gc ? lockers + 1 : undefined,
    seed: options.seed,
    logDir,
    faultGapMs: options.faultGapMs,
  };
  const driver =
    load === undefined
      ? new ChaosDriver({
          ...driverOptions,
          worker: {
            ...common,
            keys: [...lockKeys, ...permitKeys],
            ...(options.fenced === undefined ? {} : { fenced: { dataTable, mode: options.fenced, fencingTable } }),
            ...(groupWorkers === 0 ? {} : { groupSlotsFrom: options.workers + 1 }),
            ...(semaphore === undefined
              ? {}
              : { semaphore: { name: SEMAPHORE_NAME, permits: semaphore.permits, slotsFrom: options.workers + groupWorkers + 1 } }),
            ...(gc ? { gcSlot: lockers + 1 } : {}),
          } satisfies Omit<WorkerConfig, keyof WorkerIdentity>,
        })
      : new ChaosDriver({
          ...driverOptions,
          workerScript: LOAD_WORKER_SCRIPT,
          worker: { ...common, slots: options.workers, marginMs: options.marginMs, load } satisfies Omit<LoadWorkerConfig, keyof WorkerIdentity>,
        });
  const probe =
    load === undefined ? undefined : new ServerProbe({ endpoint, tableName, leaseMs: options.leaseMs, thresholdMs: options.heartbeatMs / 4 });
  const startedAt = performance.now();
  let requests = 0;
  let endNs: bigint;
  let probed: ServerProbeReport | undefined;
  // The proxy passes every worker's requests on: while this process ran nothing, neither did it.
  const proxyLog = join(logDir, `${PROXY_STALLS}.jsonl`);
  const stopWatchingProxy =
    load === undefined ? undefined : watchStalls(PROXY_STALLS, (event) => appendFileSync(proxyLog, `${JSON.stringify(event)}\n`));
  try {
    await probe?.start();
    driver.start();
    const until = startedAt + options.seconds * 1_000;
    while (performance.now() < until && signal?.aborted !== true) {
      await sleep(Math.min(1_000, until - performance.now()));
      // The proxy remembers every exchange; a long run only needs the count.
      requests += proxy.exchanges.length;
      proxy.exchanges.length = 0;
    }
  } finally {
    endNs = process.hrtime.bigint();
    stopWatchingProxy?.();
    await driver.stop();
    await proxy.close();
    probed = await probe?.stop();
  }
  requests += proxy.exchanges.length;
  const events = await readEvents(logDir);
  const check = checkChaosLog(events, { leaseMs: options.leaseMs, pollMs: options.pollMs, marginMs: options.marginMs, endNs });
  const scan = await scanLockTable(endpoint, tableName);
  const loadCheck =
    loadSchedule === undefined
      ? undefined
      : checkLoad(events, {
          leaseMs: options.leaseMs,
          heartbeatMs: options.heartbeatMs,
          marginMs: options.marginMs,
          endNs,
          injected: loadSchedule.injected,
          windows: loadSchedule.windows(),
          busy: probe?.windows() ?? [],
          slowReplies,
        });
  const fenced: FencedReport | undefined =
    options.fenced === undefined ? undefined : { ...summarizeWrites(events), ...(await scanCounters(endpoint, dataTable)) };

  const violations: string[] = [
    ...check.overlaps.map((o) => `overlap on ${o.key}: ${o.first.worker} and ${o.second.worker} for ${o.overlapMs} ms`),
    // A load run's workers ask for many keys at once, which the takeover measure (one ask at a time) does not model: reported only.
    // Nor does it model a group's wait for all of its keys at once: a slow takeover by a group is reported only.
    ...(loadCheck === undefined ? check.slowTakeovers.filter((u) => u.byGroup !== true) : []).map(
      (u) =>
        `${u.key} unavailable ${u.ms} ms after ${u.worker} ${u.fault === 'kill' ? 'died' : 'was paused'} (bound ${check.unavailableBoundMs} ms)`,
    ),
    ...check.partialGroups.map((p) => `partial group of ${p.worker} at ${p.at}: expected ${p.expected.join(',')}, found ${p.found.join(',')}`),
    ...check.overfull.map(
      (o) => `semaphore ${o.semaphore} of ${o.permits} permits had ${o.holders} holders at ${o.atNs}: ${JSON.stringify(o.holds)}`,
    ),
    ...check.heldItemsDeleted.map(
      (d) => `gc deleted ${d.key} at RVN ${d.rvn} (${d.outcome}) while ${d.hold.worker} held it (acquired ${d.hold.rvn}): ${JSON.stringify(d)}`,
    ),
    ...check.wrongGrants.map((g) => `${g.worker} asked for ${g.asked} permits of ${g.semaphore} and was granted ${JSON.stringify(g.keys)}`),
    ...(loadCheck === undefined ? [] : loadViolations(loadCheck)),
    ...driver.crashes.map(
      (c) => `${c.worker} exited by itself (code ${c.code}, signal ${c.signal}): ${c.stderrTail.trim().split('\n').slice(-3).join(' | ')}`,
    ),
    ...scan.malformed.map((m) => `malformed item ${m}`),
  ];
  if (check.acquisitions === 0) violations.push('no acquisition at all: the run proved nothing');
  if (groupWorkers > 0 && check.groupAcquisitions === 0) violations.push('no group acquisition at all: the group run proved nothing');
  if (gc && (check.gcDeletes.deleted ?? 0) === 0) violations.push('the gc deleted nothing: the gc run proved nothing');
  if (semaphoreWorkers > 0 && check.permitsGranted === 0) violations.push('no permit granted at all: the semaphore run proved nothing');
  if (fenced !== undefined) {
    if (fenced.lostUpdates > 0) violations.push(`${fenced.lostUpdates} lost update(s) in the counter items`);
    if (fenced.outcomes.fencedOut > 0)
      violations.push(`${fenced.outcomes.fencedOut} write(s) under a held lock met a larger fencing token than the lock's`);
    violations.push(...fenced.malformedCounters.map((m) => `malformed counter ${m}`));
    if (options.fenced === 'guarded' && fenced.refusedWrites === 0)
      violations.push("no write was refused by the lock's check: the fenced run proved nothing");
    if (fenced.lateWrites === 0) violations.push('no late write was sent: the fenced run proved nothing');
  }
  if (!options.keepLogs && violations.length === 0) await rm(logDir, { recursive: true, force: true });
  return {
    options: settings,
    seconds: Math.round((performance.now() - startedAt) / 100) / 10,
    requests,
    networkFaults: { ...schedule.counts },
    check,
    crashes: driver.crashes,
    scan,
    ...(fenced === undefined ? {} : { fenced }),
    ...(loadCheck === undefined || loadSchedule === undefined
      ? {}
      : { ...loadCheck, loadFaults: { ...loadSchedule.load }, serverProbe: probed }),
    violations,
    logDir: options.keepLogs || violations.length > 0 ? logDir : undefined,
  };
}
