/**
 * `dynamodb-lock run` never lets its command outlive the lock: whatever
 * happens to the lock or to `dynamodb-lock` itself (a network partition, a
 * SIGKILL, a SIGSTOP), the command's whole process group is dead before
 * another machine's `run --wait` can start its own command. Real CLI
 * processes against DynamoDB Local; the two "machines" share a log file whose
 * order of lines is the order of events.
 */
import { afterEach, beforeEach, describe, expect, it } from '@jest/globals';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { localEndpoint } from '../../test-kit/aws.js';
import { CliProcess, cliEnvironment } from '../../test-kit/cli-process.js';
import { FaultProxy } from '../../test-kit/fault-proxy.js';
import { isRunning } from '../../test-kit/processes.js';
import { LockTestBed, waitUntil } from '../../test-kit/test-locks.js';

let bed: LockTestBed;
let dir: string;
let log: string;
const started: CliProcess[] = [];
const proxies: FaultProxy[] = [];

beforeEach(async () => {
  bed = new LockTestBed('cli-supervision');
  await bed.createTable();
  dir = mkdtempSync(join(tmpdir(), 'cli-supervision-'));
  log = join(dir, 'events.log');
});

afterEach(async () => {
  for (const cli of started.splice(0)) {
    if (isRunning(cli.child)) cli.child.kill('SIGCONT');
    cli.kill();
  }
  for (const pid of ranPids()) if (isRunning(pid)) process.kill(pid, 'SIGKILL');
  await Promise.all(proxies.splice(0).map((proxy) => proxy.close()));
  await bed.dispose();
  rmSync(dir, { recursive: true, force: true });
});

/**
 * A command that ignores SIGTERM, starts a second process in its process
 * group, and has both write a line to the log every 20 ms: `LABEL start PID`,
 * then `LABEL tick`, and `LABEL SIGTERM` when one arrives.
 */
const TICKER =
  "const fs = require('fs'); const [log, label] = process.argv.slice(1);" +
  "process.on('SIGTERM', () => fs.appendFileSync(log, label + ' SIGTERM\\n'));" +
  "fs.appendFileSync(log, label + ' start ' + process.pid + '\\n');" +
  "setInterval(() => fs.appendFileSync(log, label + ' tick\\n'), 20);";
const tickingPair = (label: string): string => `"$NODE" -e "$TICKER" "$1" ${label}-child & exec "$NODE" -e "$TICKER" "$1" ${label}`;
const tickingGroup = (label: string): string[] => ['sh', '-c', tickingPair(label), 'sh', log];
/** A command that logs `LABEL start` and exits. */
const oneLine = (label: string): string[] => [
  process.execPath,
  '-e',
  "require('fs').appendFileSync(process.argv[1], process.argv[2] + ' start\\n')",
  log,
  label,
];

const environment = (): NodeJS.ProcessEnv => ({ ...cliEnvironment(), NODE: process.execPath, TICKER });

function run(endpoint: string, args: readonly string[], command: readonly string[]): CliProcess {
  const cli = new CliProcess(['run', '--endpoint', endpoint, '--table', bed.tableName, ...args, '--', ...command], { env: environment() });
  started.push(cli);
  return cli;
}

const lines = (): string[] => (existsSync(log) ? readFileSync(log, 'utf8').trim().split('\n') : []);

/** The pids of every process that logged `LABEL start PID`. */
function ranPids(label = ''): number[] {
  return lines()
    .map((line) => /^(\S+) start (\d+)$/.exec(line))
    .filter((match): match is RegExpExecArray => match !== null && (match[1] as string).startsWith(label))
    .map((match) => Number(match[2]));
}

/** The parent of process `pid`: the watchdog, for the command of `run` (Linux, /proc). */
function parentOf(pid: number): number {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  return Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
}

async function tickingGroupStarted(label: string): Promise<number[]> {
  await waitUntil(`${label} and its child started`, () => ranPids(label).length === 2, { timeoutMs: 30_000 });
  return ranPids(label);
}

/** What the first command's group logged after the second command started. */
function linesOfAfter(label: string, marker: string): string[] {
  const all = lines();
  const at = all.indexOf(marker);
  expect(at).toBeGreaterThanOrEqual(0);
  return all.slice(at).filter((line) => line.startsWith(label));
}

describe('run: the command never outlives its lock', () => {
  it('cut off from DynamoDB, it kills its command group before the lock can pass to another run', async () => {
    const proxy = await FaultProxy.start(localEndpoint());
    proxies.push(proxy);
    const first = run(proxy.endpoint, ['--lease', '3s', 'job'], tickingGroup('A'));
    const pids = await tickingGroupStarted('A');

    proxy.blackhole(); // its heartbeats get no answer from now on: its lock lapses
    const second = run(localEndpoint(), ['--wait', 'job'], oneLine('B'));
    expect((await second.exited).code).toBe(0);
    const result = await first.exited;

    expect(linesOfAfter('A', 'B start')).toEqual([]);
    expect(lines()).toContain('A SIGTERM');
    expect(result.code).toBe(76);
    expect(result.stderr).toContain('is no longer held');
    for (const pid of pids) expect(isRunning(pid)).toBe(false);
  }, 60_000);

  it.each<['SIGKILL' | 'SIGSTOP']>([['SIGKILL'], ['SIGSTOP']])(
    'when dynamodb-lock gets %s, its command group is killed before the lock can pass to another run',
    async (signal) => {
      const first = run(localEndpoint(), ['--lease', '3s', 'job'], tickingGroup('A'));
      const pids = await tickingGroupStarted('A');

      first.child.kill(signal);
      const second = run(localEndpoint(), ['--wait', 'job'], oneLine('B'));
      expect((await second.exited).code).toBe(0);
      for (const pid of pids) await waitUntil(`process ${pid} of the first command is gone`, () => !isRunning(pid), { timeoutMs: 20_000 });

      expect(linesOfAfter('A', 'B start')).toEqual([]);
      if (signal === 'SIGSTOP') {
        first.child.kill('SIGCONT');
        const result = await first.exited;
        expect(result.code).toBe(76);
      }
    },
    60_000,
  );

  it('should its watchdog die, kills the command group itself, releases the lock and exits with 1', async () => {
    const first = run(localEndpoint(), ['job'], tickingGroup('A'));
    const pids = await tickingGroupStarted('A');
    const commandPid = Number(/^A start (\d+)$/m.exec(readFileSync(log, 'utf8'))?.[1]);

    process.kill(parentOf(commandPid), 'SIGKILL');
    const result = await first.exited;

    expect(result.stderr).toContain('the watchdog process ended');
    expect(result.code).toBe(1);
    for (const pid of pids) await waitUntil(`process ${pid} of the command is gone`, () => !isRunning(pid), { timeoutMs: 20_000 });
    expect(await bed.item('job')).toBeUndefined();
  }, 60_000);

  it('stopped as a service manager stops a service (SIGTERM to every process), lets the command stop gracefully and releases the lock', async () => {
    // A graceful stop that takes a while: the lock's safe time (18 s of the default 20 s lease) has many seconds left.
    const script =
      "const fs = require('fs'); const log = process.argv[1]; let stopping = false;" +
      "process.on('SIGTERM', () => { fs.appendFileSync(log, 'A SIGTERM\\n'); if (stopping) return; stopping = true;" +
      "  setTimeout(() => { fs.appendFileSync(log, 'A stopped\\n'); process.exit(0); }, 1500); });" +
      "fs.appendFileSync(log, 'A start ' + process.pid + '\\n'); setInterval(() => {}, 1000);";
    const cli = run(localEndpoint(), ['job'], [process.execPath, '-e', script, log]);
    await waitUntil('the command started', () => ranPids('A').length === 1, { timeoutMs: 30_000 });
    const [commandPid] = ranPids('A') as [number];

    // systemd's KillMode=control-group: the same SIGTERM to dynamodb-lock, its watchdog and the command.
    for (const pid of [cli.child.pid as number, parentOf(commandPid), commandPid]) process.kill(pid, 'SIGTERM');
    const result = await cli.exited;

    expect(lines()).toContain('A stopped');
    expect(result.stderr).toBe('');
    expect(result.code).toBe(0);
    expect(await bed.item('job')).toBeUndefined();
  }, 60_000);

  it('stopped as a service manager stops a service, still kills a command that ignores SIGTERM once the lock can no longer be trusted', async () => {
    const first = run(localEndpoint(), ['--lease', '3s', 'job'], tickingGroup('A'));
    const pids = await tickingGroupStarted('A');
    const watchdogPid = parentOf(pids[0] as number);

    for (const pid of [first.child.pid as number, watchdogPid, ...pids]) process.kill(pid, 'SIGTERM');
    first.child.kill('SIGSTOP'); // no renewal reaches the watchdog any more: it is on its own
    const second = run(localEndpoint(), ['--wait', 'job'], oneLine('B'));
    expect((await second.exited).code).toBe(0);
    for (const pid of pids) await waitUntil(`process ${pid} of the first command is gone`, () => !isRunning(pid), { timeoutMs: 20_000 });

    expect(linesOfAfter('A', 'B start')).toEqual([]);
    first.child.kill('SIGCONT');
    expect((await first.exited).code).toBe(76);
  }, 60_000);

  it('lets a command run for several leases while heartbeats renew the lock', async () => {
    // Over two leases; a lease long enough that a loaded machine stalling this CLI for a second does not lapse it.
    const script = "setTimeout(() => require('fs').appendFileSync(process.argv[1], 'A done\\n'), 7000)";
    const cli = run(localEndpoint(), ['--lease', '3s', 'job'], [process.execPath, '-e', script, log]);
    const result = await cli.exited;
    expect(result.stderr).toBe('');
    expect(result.code).toBe(0);
    expect(lines()).toEqual(['A done']);
  }, 60_000);

  it('kills what the command left running in its group before it releases the lock', async () => {
    // The shell starts the ticking pair in the background and exits once told to, leaving the pair behind.
    const go = join(dir, 'go');
    const first = run(localEndpoint(), ['job'], ['sh', '-c', `(${tickingPair('A')}) & while [ ! -e "$2" ]; do sleep 0.05; done`, 'sh', log, go]);
    const pids = await tickingGroupStarted('A');
    const second = run(localEndpoint(), ['--wait', 'job'], oneLine('B'));
    writeFileSync(go, '');
    expect((await first.exited).code).toBe(0);
    expect((await second.exited).code).toBe(0);

    expect(linesOfAfter('A', 'B start')).toEqual([]);
    for (const pid of pids) expect(isRunning(pid)).toBe(false);
  }, 60_000);

  it('gives the command the lock in DYNAMODB_LOCK_* variables: table, key, owner and RVN', async () => {
    const seen = join(dir, 'environment.json');
    const go = join(dir, 'go');
    const script =
      "const fs = require('fs'); const [seen, go] = process.argv.slice(1);" +
      'const lock = Object.fromEntries(Object.entries(process.env).filter(([name]) => name.startsWith("DYNAMODB_LOCK_")));' +
      'fs.writeFileSync(seen, JSON.stringify(lock));' +
      // Until the test has read the lock (at most 30 s: a failed test leaves no process behind).
      'const wait = setInterval(() => fs.existsSync(go) && clearInterval(wait), 20); setTimeout(() => process.exit(9), 30000).unref();';
    const cli = run(localEndpoint(), ['--owner', 'env-owner', '--lease', '1h', 'env-job'], [process.execPath, '-e', script, seen, go]);
    await waitUntil('the command wrote its environment', () => existsSync(seen), { timeoutMs: 30_000 });
    const item = await bed.item('env-job');
    writeFileSync(go, '');

    expect(JSON.parse(readFileSync(seen, 'utf8'))).toEqual({
      DYNAMODB_LOCK_TABLE: bed.tableName,
      DYNAMODB_LOCK_KEY: 'env-job',
      DYNAMODB_LOCK_OWNER: 'env-owner',
      DYNAMODB_LOCK_RVN: item?.['recordVersionNumber']?.S,
    });
    expect((await cli.exited).code).toBe(0);
  }, 60_000);
});
