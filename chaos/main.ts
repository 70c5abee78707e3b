/**
 * `npm run chaos -- --seconds N --seed S [--workers W] [--keys K] [--lease MS]
 * [--heartbeat MS] [--poll MS] [--margin MS] [--max-attempts N] [--fenced [guarded|unguarded]]
 * [--endpoint URL] [--keep-logs] [--json]`
 *
 * Workers use the DynamoDB client README tells users to build (the SDK's own
 * retries); `--max-attempts N` sets the SDK's maxAttempts instead.
 * `--fenced` makes every act a guarded write to a counter item per key, some
 * of them late on purpose; `--fenced unguarded` sends the same writes
 * without the lock's check, to show the updates that are then lost.
 *
 * Starts DynamoDB Local (unless --endpoint names one), runs the chaos run,
 * prints its report (one JSON line with --json) and exits 1 on any violation.
 */
import { parseArgs } from 'node:util';
import { startDynamoDBLocal } from '../src/testing/index.js';
import type { FencedMode } from './fenced-writes.js';
import { DEFAULT_CHAOS, runChaos, type ChaosReport } from './runner.js';

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
    fenced: { type: 'boolean', default: false },
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

function summary(report: ChaosReport): string {
  const c = report.check;
  const f = report.fenced;
  return [
    `chaos run: ${report.seconds} s, seed ${report.options.seed}, ${report.options.workers} workers, ${report.options.keys} keys, lease ${report.options.leaseMs} ms, ` +
      `SDK maxAttempts ${report.options.maxAttempts ?? 'default'}`,
    `acquisitions ${c.acquisitions}, acts ${c.acts}, requests ${report.requests}`,
    `network faults ${JSON.stringify(report.networkFaults)}`,
    `process faults ${JSON.stringify(c.processFaults)}, losses seen by workers ${JSON.stringify(c.lossesByKind)}`,
    `overlapping checked critical sections: ${c.overlaps.length}`,
    `takeovers after a kill or pause: ${c.takeovers}, longest unavailability ${c.maxUnavailableMs} ms (bound ${c.unavailableBoundMs} ms)`,
    `final scan: ${report.scan.items} items, ${report.scan.malformed.length} malformed`,
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
const local = values.endpoint === undefined ? await startDynamoDBLocal() : undefined;
let report: ChaosReport;
try {
  report = await runChaos({
    ...DEFAULT_CHAOS,
    endpoint: values.endpoint ?? local!.endpoint,
    seconds: whole('seconds', values.seconds, DEFAULT_CHAOS.seconds),
    seed: whole('seed', values.seed, DEFAULT_CHAOS.seed),
    workers: whole('workers', values.workers, DEFAULT_CHAOS.workers),
    keys: whole('keys', values.keys, DEFAULT_CHAOS.keys),
    leaseMs: whole('lease', values.lease, DEFAULT_CHAOS.leaseMs),
    heartbeatMs: whole('heartbeat', values.heartbeat, DEFAULT_CHAOS.heartbeatMs),
    pollMs: whole('poll', values.poll, DEFAULT_CHAOS.pollMs),
    marginMs: whole('margin', values.margin, DEFAULT_CHAOS.marginMs),
    maxAttempts: values['max-attempts'] === undefined ? undefined : whole('max-attempts', values['max-attempts'], 1),
    fenced,
    keepLogs: values['keep-logs'],
    signal: stop.signal,
  });
} finally {
  await local?.stop();
}
// Exit once the report is out, whatever handle may still be open: a run always ends after its report.
process.stdout.write(`${values.json ? JSON.stringify(report) : summary(report)}\n`, () => process.exit(report.violations.length === 0 ? 0 : 1));
