/**
 * `npm run chaos -- --seconds N --seed S [--workers W] [--keys K] [--lease MS]
 * [--heartbeat MS] [--poll MS] [--margin MS] [--endpoint URL] [--keep-logs] [--json]`
 *
 * Starts DynamoDB Local (unless --endpoint names one), runs the chaos run,
 * prints its report (one JSON line with --json) and exits 1 on any violation.
 */
import { parseArgs } from 'node:util';
import { startDynamoDBLocal } from '../src/testing/index.js';
import { DEFAULT_CHAOS, runChaos, type ChaosReport } from './runner.js';

const { values } = parseArgs({
  options: {
    seconds: { type: 'string' },
    seed: { type: 'string' },
    workers: { type: 'string' },
    keys: { type: 'string' },
    lease: { type: 'string' },
    heartbeat: { type: 'string' },
    poll: { type: 'string' },
    margin: { type: 'string' },
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

function summary(report: ChaosReport): string {
  const c = report.check;
  return [
    `chaos run: ${report.seconds} s, seed ${report.options.seed}, ${report.options.workers} workers, ${report.options.keys} keys, lease ${report.options.leaseMs} ms`,
    `acquisitions ${c.acquisitions}, acts ${c.acts}, requests ${report.requests}`,
    `network faults ${JSON.stringify(report.networkFaults)}`,
    `process faults ${JSON.stringify(c.processFaults)}, losses seen by workers ${JSON.stringify(c.lossesByKind)}`,
    `overlapping checked critical sections: ${c.overlaps.length}`,
    `takeovers after a kill or pause: ${c.takeovers}, longest unavailability ${c.maxUnavailableMs} ms (bound ${c.unavailableBoundMs} ms)`,
    `final scan: ${report.scan.items} items, ${report.scan.malformed.length} malformed`,
    report.violations.length === 0 ? 'no violations' : `VIOLATIONS:\n  ${report.violations.join('\n  ')}\nlogs: ${report.logDir}`,
  ].join('\n');
}

const stop = new AbortController();
process.once('SIGINT', () => stop.abort());
process.once('SIGTERM', () => stop.abort());

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
    keepLogs: values['keep-logs'],
    signal: stop.signal,
  });
} finally {
  await local?.stop();
}
process.stdout.write(`${values.json ? JSON.stringify(report) : summary(report)}\n`);
process.exitCode = report.violations.length === 0 ? 0 : 1;
