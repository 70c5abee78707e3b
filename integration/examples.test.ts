/**
 * The examples in examples/ run as users would run them, against DynamoDB
 * Local: each is a real process configured through the AWS environment.
 */
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { ChildProcess } from 'node:child_process';
import { setTimeout as sleep } from 'node:timers/promises';
import { LockClient } from '../src/index.js';
import { localClientConfig, localEndpoint, uniqueTableName } from '../test-kit/aws.js';
import { CliProcess, cliEnvironment } from '../test-kit/cli-process.js';
import { FaultProxy, operationOf, refuseDeletes } from '../test-kit/fault-proxy.js';
import { snippetAgainstProgram } from '../test-kit/doc-snippets.js';
import { isRunning, spawnTsx } from '../test-kit/processes.js';
import { waitUntil } from '../test-kit/test-locks.js';

const tableName = uniqueTableName('examples');

const environment = (extra: NodeJS.ProcessEnv = {}): NodeJS.ProcessEnv => ({
  ...cliEnvironment({ endpointFromEnv: true }),
  LOCK_TABLE: tableName,
  ...extra,
});

class Example {
  readonly child: ChildProcess;
  readonly exited: Promise<number | null>;
  stdout = '';
  stderr = '';
  constructor(script: string, env: NodeJS.ProcessEnv) {
    this.child = spawnTsx(script, [], { env });
    this.child.stdout?.on('data', (chunk: Buffer) => (this.stdout += chunk.toString('utf8')));
    this.child.stderr?.on('data', (chunk: Buffer) => (this.stderr += chunk.toString('utf8')));
    this.exited = new Promise((resolve) => this.child.once('close', (code) => resolve(code)));
  }
  lines(): string[] {
    return this.stdout.split('\n').filter((line) => line !== '');
  }
  kill(): void {
    if (isRunning(this.child)) this.child.kill('SIGKILL');
  }
}

/** A piece of work an example logged: the keys it held, and when it started and ended. */
interface Work {
  readonly keys: readonly string[];
  readonly from: number;
  readonly to: number;
}

/** Every two pieces of work on one key whose times overlap. */
function overlaps(work: readonly Work[]): string[] {
  const byKey = new Map<string, Work[]>();
  for (const entry of work) for (const key of entry.keys) byKey.set(key, [...(byKey.get(key) ?? []), entry]);
  const found: string[] = [];
  for (const [key, entries] of byKey) {
    const sorted = entries.sort((x, y) => x.from - y.from);
    for (let i = 1; i < sorted.length; i++) {
      if (sorted[i]!.from < sorted[i - 1]!.to) found.push(`${key}: ${JSON.stringify(sorted[i - 1])} and ${JSON.stringify(sorted[i])}`);
    }
  }
  return found;
}

const running: Array<Example | CliProcess> = [];
function start(script: string, env: NodeJS.ProcessEnv = environment()): Example {
  const example = new Example(script, env);
  running.push(example);
  return example;
}

beforeAll(async () => {
  const client = new LockClient({ dynamoDBConfig: localClientConfig(), tableName });
  await client.createLockTable();
  await client.close();
});

afterAll(() => {
  for (const process of running) process.kill();
});

describe('examples/cron-job: a job under dynamodb-lock run', () => {
  it('runs on one machine; the others exit with 75 at once', async () => {
    const line = [
      'run',
      '--table',
      tableName,
      '--lease',
      '3s',
      'nightly-report',
      '--',
      process.execPath,
      '--import',
      'tsx',
      'examples/cron-job/report.ts',
    ];
    // Started together, like cron on two machines; the job outlasts both starts by far.
    const env = { ...cliEnvironment({ endpointFromEnv: true }), REPORT_STEP_MS: '2000' };
    const machines = [new CliProcess(line, { env }), new CliProcess(line, { env })];
    running.push(...machines);
    const results = await Promise.all(machines.map((machine) => machine.exited));
    const ran = results.find((result) => result.code === 0);
    const skipped = results.find((result) => result.code === 75);
    expect(results.map((result) => result.code).sort()).toEqual([0, 75]);
    expect(ran?.stdout).toMatch(/^report: collect done\nreport: aggregate done\nreport: publish done\nreport: written by \d+\n$/);
    expect(skipped?.stdout).toBe('');
  }, 60_000);
});

describe('examples/leader-scheduler.ts', () => {
  it('runs jobs on one replica only; on SIGTERM the leader resigns and another leads', async () => {
    const alpha = start('examples/leader-scheduler.ts', environment({ REPLICA_NAME: 'alpha', SCHEDULER_TICK_MS: '100' }));
    await waitUntil('alpha leads', () => alpha.stdout.includes('alpha: leads'), { timeoutMs: 30_000 });
    const bravo = start('examples/leader-scheduler.ts', environment({ REPLICA_NAME: 'bravo', SCHEDULER_TICK_MS: '100' }));
    await waitUntil('bravo is up and alpha ran jobs', () => alpha.lines().filter((l) => l.endsWith('running due jobs')).length >= 5, {
      timeoutMs: 30_000,
    });
    expect(bravo.stdout).toBe(''); // campaigning, not leading

    alpha.child.kill('SIGTERM');
    expect(await alpha.exited).toBe(0);
    expect(alpha.lines().slice(-2)).toEqual(['alpha: stops leading', 'alpha: stopped']);
    await waitUntil('bravo leads after the resignation', () => bravo.stdout.includes('bravo: running due jobs'), { timeoutMs: 10_000 });

    bravo.child.kill('SIGTERM');
    expect(await bravo.exited).toBe(0);
    expect(bravo.lines()[0]).toBe('bravo: leads');
    expect(bravo.stderr).not.toMatch(/Error:/);
  }, 90_000);
});

describe('examples/worker-pool.ts', () => {
  it('two processes of four workers never work on one key at the same time', async () => {
    const env = environment({ TENANTS: '6', WORKERS: '4' });
    const pools = [start('examples/worker-pool.ts', env), start('examples/worker-pool.ts', env)];
    const done = (): number => pools.reduce((n, pool) => n + pool.lines().length, 0);
    await waitUntil('both pools did some work', () => pools.every((pool) => pool.lines().length >= 10) && done() >= 60, {
      timeoutMs: 60_000,
    });
    for (const pool of pools) pool.child.kill('SIGTERM');
    expect(await Promise.all(pools.map((pool) => pool.exited))).toEqual([0, 0]);
    expect(pools.map((pool) => pool.stderr).join('')).not.toMatch(/worker \d+:/);

    const work = pools.flatMap((pool) => pool.lines().map((line) => JSON.parse(line) as { key: string; from: number; to: number; pid: number }));
    expect(overlaps(work.map((entry) => ({ ...entry, keys: [entry.key] })))).toEqual([]);
    expect(new Set(work.map((entry) => entry.pid)).size).toBe(2);
  }, 90_000);

  it('a role without DeleteItem: each refused release lets its key lapse, and the pool still stops at SIGTERM', async () => {
    const proxy = await FaultProxy.start(localEndpoint());
    try {
      proxy.setRule(refuseDeletes);
      const deletes = (): number => proxy.exchanges.filter((exchange) => operationOf(exchange.request) === 'DeleteItem').length;
      const pool = start('examples/worker-pool.ts', environment({ TENANTS: '2', WORKERS: '1', AWS_ENDPOINT_URL_DYNAMODB: proxy.endpoint }));
      await waitUntil('two pieces of work done and their releases refused', () => pool.lines().length >= 2 && deletes() >= 2, {
        timeoutMs: 30_000,
      });
      await sleep(500);
      pool.child.kill('SIGTERM');
      // A key whose release was refused and held again would stay this process's (hasLock) and be heartbeated for as long
      // as it runs, and close() would release it once more, fail again, and end the pool with LockClientCloseError.
      const exited = await Promise.race([pool.exited, sleep(15_000, 'still running', { ref: false })]);
      expect(pool.stderr).not.toContain('failed to release');
      expect(exited).toBe(0);
    } finally {
      await proxy.close();
    }
  }, 60_000);
});

describe('examples/bank-transfer.ts', () => {
  it("two processes never move money on one account at the same time, and README's snippet is the example's code", async () => {
    const { lines, missing } = snippetAgainstProgram('README.md', '### Several locks at once', 'examples/bank-transfer.ts');
    expect(lines.length).toBeGreaterThan(0);
    expect(missing).toEqual([]);

    const env = environment({ ACCOUNTS: '4' });
    const banks = [start('examples/bank-transfer.ts', env), start('examples/bank-transfer.ts', env)];
    await waitUntil('both processes made transfers', () => banks.every((bank) => bank.lines().length >= 10), { timeoutMs: 60_000 });
    for (const bank of banks) bank.child.kill('SIGTERM');
    expect(await Promise.all(banks.map((bank) => bank.exited))).toEqual([0, 0]);
    expect(banks.map((bank) => bank.stderr).join('')).not.toMatch(/transfer account/);

    const moves = banks.flatMap((bank) => bank.lines().map((line) => JSON.parse(line) as Work));
    expect(overlaps(moves)).toEqual([]);
  }, 90_000);
});
