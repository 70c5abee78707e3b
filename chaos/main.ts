/**
 * `npm run chaos -- --seconds N --seed S [--workers W] [--keys K] [--lease MS]
 * [--heartbeat MS] [--poll MS] [--margin MS] [--max-attempts N] [--retry-mode standard|adaptive]
 * [--fenced [guarded|unguarded]] [--groups [--group-workers N]] [--semaphores [--semaphore-workers N] [--permits N]]
 * [--gc] [--load [--held N] [--waits N] [--burst N]]
 * [--endpoint URL] [--keep-logs] [--json]`
 *
 * Workers use the DynamoDB client README tells users to build (the SDK's own
 * retries); `--max-attempts N` sets the SDK's maxAttempts instead, and
 * `--retry-mode` its retryMode (default: the SDK's, standard).
 * `--fenced` makes every act a guarded write to a counter item per key, some
 * of them late on purpose; `--fenced unguarded` sends the same writes
 * without the lock's check, to show the updates that are then lost.
 *
 * `--groups` adds `--group-workers` workers (3) that take 2–4 random keys at
 * once with acquireLocks, among the single-key ones, on 4 keys unless
 * `--keys` says otherwise; the checker also proves every group held whole
 * (chaos/group-check.ts), and the report counts `groupAcquisitions`.
 *
 * `--semaphores` adds `--semaphore-workers` workers (4) that take 1 to N−1
 * permits at once of one semaphore of `--permits` N (3), among 3 single-key
 * workers unless `--workers` says otherwise, which take the permits' keys as
 * plain locks too; the checker also proves that the semaphore never had more
 * than N holders at once (chaos/semaphore-check.ts), and the report counts
 * the permits granted.
 *
 * `--gc` (with any run but `--load`) adds a worker that runs
 * collectAbandoned passes back to back (chaos/gc-worker.ts); the checker
 * proves that no delete took an item a worker still held
 * (chaos/gc-check.ts).
 *
 * `--load` runs load workers instead (chaos/load-worker.ts): each client
 * keeps `--held` locks (200) with background heartbeats while it waits in
 * waves on `--waits` locks other workers hold (100, polled every `--poll`
 * ms), takes `--burst` locks at once (100), contends for hot keys and
 * campaigns in elections; hot keys are throttled and the server is now and
 * then saturated on purpose. Its defaults: 3 workers, lease 3000 ms,
 * heartbeat 750 ms, a process fault every 2–6 s. Its report adds
 * `heldLocksLost` (by kind, and provoked by a pause, a saturation, a stall
 * of the worker's event loop or a fault on the lock's own requests, or not)
 * and `acquisitionsOverdue`; a loss not provoked and an overdue call are
 * violations (RELIABILITY.md, "The load run"). `--keys` does not apply.
 *
 * Starts DynamoDB Local (unless --endpoint names one), runs the chaos run,
 * prints its report (one JSON line with --json) and exits 1 on any violation.
 */
import { parseArgs } from 'node:util';
import { startDynamoDBLocal } from '../src/testing/index.js';
import type { FencedMode } from './fenced-writes.js';
import { DEFAULT_LOAD_SHAPE, LOAD_DEFAULTS } from './load-run.js';
import type { LoadShape } from './load-worker.js';
import { DEFAULT_CHAOS, GROUP_DEFAULTS, runChaos, SEMAPHORE_DEFAULTS, type ChaosOptions, type ChaosReport } from './runner.js';
import type { RetryMode } from './worker-dynamodb.js';

const { values, positionals } = parseArgs({
  allowPositionals: true,
  options: {
    seconds: { type: 'string' },
    seed: { type: 'string' },
    workers: { type: 'string' },
    keys: { type: 'string' },
    lease: { type: 'string' },
    heartbeat: { type: 'string' },
    poll: { type: 'string' },
    margin: { type: 'string' },
    'max-attempts': { type: 'string' },
    'retry-mode': { type: 'string' },
    fenced: { type: 'boolean', default: false },
    load: { type: 'boolean', default: false },
    groups: { type: 'boolean', default: false },
    'group-workers': { type: 'string' },
    semaphores: { type: 'boolean', default: false },
    gc: { type: 'boolean', default: false },
    'semaphore-workers': { type: 'string' },
    permits: { type: 'string' },
    held: { type: 'string' },
    waits: { type: 'string' },
    burst: { type: 'string' },
    endpoint: { type: 'string' },
    'keep-logs': { type: 'boolean', default: false },
    json: { type: 'boolean', default: false },
  },
});

function whole(name: string, text: string | undefined, fallback: number): number {
  if (text === undefined) return fallback;
  const n = Number(text);
  if (!Number.isSafeInteger(n) || n < 0) {
    process.stderr.write(`--${name} must be a whole number, got ${JSON.stringify(text)}\n`);
    process.exit(2);
  }
  return n;
}

/** `--fenced` alone means guarded; `--fenced unguarded` names the other mode. */
function fencedMode(): FencedMode | undefined {
  const [mode, ...rest] = positionals;
  if (rest.length > 0 || (mode !== undefined && (!values.fenced || (mode !== 'guarded' && mode !== 'unguarded')))) {
    process.stderr.write(`unexpected argument(s) ${JSON.stringify(positionals)}; --fenced takes guarded or unguarded\n`);
    process.exit(2);
  }
  return values.fenced ? (mode ?? 'guarded') : undefined;
}

function retryMode(): RetryMode | undefined {
  const mode = values['retry-mode'];
  if (mode === undefined || mode === 'standard' || mode === 'adaptive') return mode;
  process.stderr.write(`--retry-mode must be standard or adaptive, got ${JSON.stringify(mode)}\n`);
  process.exit(2);
}

function loadShape(): LoadShape | undefined {
  if (!values.load) {
    if (values.held !== undefined || values.waits !== undefined || values.burst !== undefined) {
      process.stderr.write('--held, --waits and --burst need --load\n');
      process.exit(2);
    }
    return undefined;
  }
  return {
    ...DEFAULT_LOAD_SHAPE,
    held: whole('held', values.held, DEFAULT_LOAD_SHAPE.held),
    waits: whole('waits', values.waits, DEFAULT_LOAD_SHAPE.waits),
    burst: whole('burst', values.burst, DEFAULT_LOAD_SHAPE.burst),
  };
}

/** Group workers of a `--groups` run: 3 unless `--group-workers` says otherwise. */
function groupWorkers(): number | undefined {
  if (!values.groups) {
    if (values['group-workers'] !== undefined) {
      process.stderr.write('--group-workers needs --groups\n');
      process.exit(2);
    }
    return undefined;
  }
  return whole('group-workers', values['group-workers'], GROUP_DEFAULTS.groupWorkers);
}

/** The semaphore of a `--semaphores` run: its workers and permits, from SEMAPHORE_DEFAULTS unless the flags say otherwise. */
function semaphoreShape(): ChaosOptions['semaphore'] {
  if (!values.semaphores) {
    if (values['semaphore-workers'] !== undefined || values.permits !== undefined) {
      process.stderr.write('--semaphore-workers and --permits need --semaphores\n');
      process.exit(2);
    }
    return undefined;
  }
  const permits = whole('permits', values.permits, SEMAPHORE_DEFAULTS.semaphore.permits);
  if (permits < 1) {
    process.stderr.write('--permits must be at least 1\n');
    process.exit(2);
  }
  return { workers: whole('semaphore-workers', values['semaphore-workers'], SEMAPHORE_DEFAULTS.semaphore.workers), permits };
}

function loadSummary(report: ChaosReport): string[] {
  const lost = report.heldLocksLost;
  if (lost === undefined) return [];
  const calls = report.acquisitionCalls;
  return [
    `load ${JSON.stringify(report.options.load)}: acquisition calls ${calls?.calls} (granted ${calls?.granted}, not granted ${calls?.refused}, ` +
      `failed ${JSON.stringify(calls?.failed)}), load faults ${JSON.stringify(report.loadFaults)}`,
    `server probe ${JSON.stringify(report.serverProbe)}`,
    `held locks lost: ${lost.total} ${JSON.stringify(lost.byKind)}; provoked ${lost.provoked.total} ${JSON.stringify(lost.provoked.byCause)}; ` +
      `outside the injected faults ${lost.unprovoked.total} ${JSON.stringify(lost.unprovoked.byKind)}`,
    `acquisition calls past their bound: ${report.acquisitionsOverdue}` +
      (report.worstOverdue === undefined ? '' : ` (worst ${report.worstOverdue.ms} ms of ${report.worstOverdue.boundMs} ms)`),
    `takeovers slower than lease + poll + margin (reported, not judged, under load): ${report.check.slowTakeovers.length}`,
  ];
}

function summary(report: ChaosReport): string {
  const c = report.check;
  const f = report.fenced;
  return [
    `chaos run: ${report.seconds} s, seed ${report.options.seed}, ${report.options.workers} workers, ${report.options.keys} keys, lease ${report.options.leaseMs} ms, ` +
      `SDK maxAttempts ${report.options.maxAttempts ?? 'default'}, retryMode ${report.options.retryMode ?? 'default'}`,
    `acquisitions ${c.acquisitions}, acts ${c.acts}, requests ${report.requests}`,
    `network faults ${JSON.stringify(report.networkFaults)}`,
    `process faults ${JSON.stringify(c.processFaults)}, losses seen by workers ${JSON.stringify(c.lossesByKind)}`,
    `overlapping checked critical sections: ${c.overlaps.length}`,
    ...(report.options.groupWorkers === undefined
      ? []
      : [
          `group acquisitions ${c.groupAcquisitions} of ${c.groupAsks} acquireLocks calls by ${report.options.groupWorkers} group workers, partial groups ${c.partialGroups.length}, ` +
            `slow takeovers by a group (reported, not judged) ${c.slowTakeovers.filter((u) => u.byGroup === true).length}`,
        ]),
    ...(report.options.gc !== true
      ? []
      : [
          `gc: ${c.gcPasses} passes (failed ${JSON.stringify(c.gcPassErrors)}), deletes by outcome ${JSON.stringify(c.gcDeletes)}, ` +
            `items left ${JSON.stringify(c.gcLeft)}, held items deleted ${c.heldItemsDeleted.length}`,
        ]),
    ...(report.options.semaphore === undefined
      ? []
      : [
          `permits granted ${c.permitsGranted} (grants by count ${JSON.stringify(c.permitGrantsByCount)} of ${c.permitAsks} calls) ` +
            `by ${report.options.semaphore.workers} semaphore workers on ${report.options.semaphore.permits} permits; ` +
            `most holders at once ${JSON.stringify(c.mostHolders)}, overfull ${c.overfull.length}, wrong grants ${c.wrongGrants.length}`,
        ]),
    `takeovers after a kill or pause: ${c.takeovers}, longest unavailability ${c.maxUnavailableMs} ms (bound ${c.unavailableBoundMs} ms)`,
    `final scan: ${report.scan.items} items, ${report.scan.malformed.length} malformed`,
    ...loadSummary(report),
    ...(f === undefined
      ? []
      : [
          `fenced (${report.options.fenced}): writes sent ${f.guardedWrites}, refused by the lock's check ${f.refusedWrites}, ` +
            `late ${f.lateWrites} (refused ${f.lateRefused}), outcomes ${JSON.stringify(f.outcomes)}`,
          `counter items: ${f.appliedWrites} writes applied, lost updates ${f.lostUpdates}`,
        ]),
    report.violations.length === 0 ? 'no violations' : `VIOLATIONS:\n  ${report.violations.join('\n  ')}\nlogs: ${report.logDir}`,
  ].join('\n');
}

const stop = new AbortController();
process.once('SIGINT', () => stop.abort());
process.once('SIGTERM', () => stop.abort());

const fenced = fencedMode();
const load = loadShape();
const groups = groupWorkers();
const semaphore = semaphoreShape();
if ([load, fenced, groups, semaphore].filter((mode) => mode !== undefined).length > 1) {
  process.stderr.write('--load, --fenced, --groups and --semaphores are separate runs\n');
  process.exit(2);
}
// A load, group or semaphore run starts from its own defaults; explicit flags still win.
if (load !== undefined && values.gc) {
  process.stderr.write('--gc does not run beside --load\n');
  process.exit(2);
}
const defaults =
  load !== undefined
    ? { ...DEFAULT_CHAOS, ...LOAD_DEFAULTS }
    : groups !== undefined
      ? { ...DEFAULT_CHAOS, ...GROUP_DEFAULTS }
      : semaphore !== undefined
        ? { ...DEFAULT_CHAOS, ...SEMAPHORE_DEFAULTS }
        : DEFAULT_CHAOS;
const keys = whole('keys', values.keys, defaults.keys);
if (groups !== undefined && keys < 2) {
  process.stderr.write('--groups needs at least 2 keys\n');
  process.exit(2);
}
const local = values.endpoint === undefined ? await startDynamoDBLocal({ optimizeFor: 'throughput' }) : undefined;
let report: ChaosReport;
try {
  report = await runChaos({
    ...defaults,
    endpoint: values.endpoint ?? local!.endpoint,
    seconds: whole('seconds', values.seconds, defaults.seconds),
    seed: whole('seed', values.seed, defaults.seed),
    workers: whole('workers', values.workers, defaults.workers),
    keys,
    leaseMs: whole('lease', values.lease, defaults.leaseMs),
    heartbeatMs: whole('heartbeat', values.heartbeat, defaults.heartbeatMs),
    pollMs: whole('poll', values.poll, defaults.pollMs),
    marginMs: whole('margin', values.margin, defaults.marginMs),
    maxAttempts: values['max-attempts'] === undefined ? undefined : whole('max-attempts', values['max-attempts'], 1),
    retryMode: retryMode(),
    fenced,
    load,
    groupWorkers: groups,
    semaphore,
    gc: values.gc,
    keepLogs: values['keep-logs'],
    signal: stop.signal,
  });
} finally {
  await local?.stop();
}
// Exit once the report is out, whatever handle may still be open: a run always ends after its report.
process.stdout.write(`${values.json ? JSON.stringify(report) : summary(report)}\n`, () => process.exit(report.violations.length === 0 ? 0 : 1));
