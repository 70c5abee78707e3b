/**
 * `dynamodb-lock run --permits N KEY -- COMMAND`, the real CLI in processes
 * of their own against DynamoDB Local: never more than N copies of the
 * command at once, 75 while every permit is held, and a command stopped when
 * its permit is taken from it.
 */
import { afterEach, beforeEach, describe, expect, it } from '@jest/globals';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { localEndpoint } from '../../test-kit/aws.js';
import { CliProcess, runCli } from '../../test-kit/cli-process.js';
import { isRunning } from '../../test-kit/processes.js';
import { putForeignLock } from '../../test-kit/tamper.js';
import { LockTestBed, waitUntil } from '../../test-kit/test-locks.js';

let bed: LockTestBed;
let dir: string;
const started: CliProcess[] = [];

beforeEach(async () => {
  bed = new LockTestBed('cli-run-permits');
  await bed.createTable();
  dir = mkdtempSync(join(tmpdir(), 'cli-run-permits-'));
});

afterEach(async () => {
  for (const cli of started.splice(0)) cli.kill();
  await bed.dispose();
  rmSync(dir, { recursive: true, force: true });
});

const connection = (): string[] => ['--endpoint', localEndpoint(), '--table', bed.tableName];
/** `node -e SCRIPT ARGS...`: child commands that need nothing but Node. */
const nodeScript = (script: string, ...args: string[]): string[] => [process.execPath, '-e', script, ...args];

/** A command that logs when it starts and ends (epoch ms) and the permit it runs under, running for `ms`. */
const section = (log: string, ms: number): string[] =>
  nodeScript(
    "const fs = require('fs'); const log = process.argv[1];" +
      "fs.writeFileSync(log, JSON.stringify({ start: Date.now(), key: process.env.DYNAMODB_LOCK_KEY }) + '\\n');" +
      `setTimeout(() => fs.appendFileSync(log, JSON.stringify({ end: Date.now() }) + '\\n'), ${ms});`,
    log,
  );

/** The most sections that ran at once, from their logs. */
function mostAtOnce(intervals: readonly { start: number; end: number }[]): number {
  const edges = intervals.flatMap(({ start, end }) => [
    { at: start, step: 1 },
    { at: end, step: -1 },
  ]);
  edges.sort((a, b) => a.at - b.at || a.step - b.step); // an end before a start at the same instant
  let running = 0;
  let most = 0;
  for (const { step } of edges) most = Math.max(most, (running += step));
  return most;
}

describe('run --permits N KEY -- COMMAND', () => {
  it('runs at most N copies of the command at once, each under a permit of its own, and every copy in the end', async () => {
    const logs = Array.from({ length: 5 }, (_, i) => join(dir, `copy-${i}.log`));
    const runs = logs.map(
      (log) => new CliProcess(['run', ...connection(), '--permits', '2', '--wait', 'exports', '--', ...section(log, 1_500)]),
    );
    started.push(...runs);
    const results = await Promise.all(runs.map((run) => run.exited));
    expect(results.map(({ code, stderr }) => ({ code, stderr }))).toEqual(logs.map(() => ({ code: 0, stderr: '' })));

    const intervals = logs.map((log) => {
      const [first, second] = readFileSync(log, 'utf8').trim().split('\n');
      const { start, key } = JSON.parse(first as string) as { start: number; key: string };
      return { start, end: (JSON.parse(second as string) as { end: number }).end, key };
    });
    expect(new Set(intervals.map(({ key }) => key))).toEqual(new Set(['exports#permit-1', 'exports#permit-2']));
    expect(mostAtOnce(intervals)).toBe(2);
    expect(await bed.item('exports#permit-1')).toBeUndefined();
    expect(await bed.item('exports#permit-2')).toBeUndefined();
  }, 90_000);

  it('exits with 75 without running the command while every permit is held, at once or after --timeout', async () => {
    const holder = bed.client({ ownerName: 'busy-holder' });
    await holder.acquirePermits('busy', { permits: 2, count: 2 });
    const marker = join(dir, 'ran');
    const command = nodeScript("require('fs').writeFileSync(process.argv[1], 'ran')", marker);

    const atOnce = await runCli(['run', ...connection(), '--permits', '2', 'busy', '--', ...command]);
    expect(atOnce.code).toBe(75);
    expect(atOnce.stderr).toContain('all 2 permits of the semaphore "busy" are held (one by busy-holder)');
    const afterTimeout = await runCli(['run', ...connection(), '--permits', '2', '--timeout', '1.5', 'busy', '--', ...command]);
    expect(afterTimeout.code).toBe(75);
    expect(afterTimeout.stderr).toContain('did not get a permit of the semaphore "busy" within 1.5 s');
    expect(existsSync(marker)).toBe(false);
  });

  it('refuses a semaphore whose holders count another N, and runs nothing', async () => {
    const holder = bed.client({ ownerName: 'three' });
    await holder.acquirePermits('mixed', { permits: 3, count: 3 });
    const marker = join(dir, 'ran');
    const result = await runCli([
      'run',
      ...connection(),
      '--permits',
      '2',
      'mixed',
      '--',
      ...nodeScript("require('fs').writeFileSync(process.argv[1], 'ran')", marker),
    ]);
    expect(result.code).toBe(1);
    expect(result.stderr).toContain('counts 3 permits');
    expect(existsSync(marker)).toBe(false);
  });

  it('stops its command when its permit is taken from it, and exits with 76', async () => {
    const log = join(dir, 'child.log');
    const script =
      "const fs = require('fs'); fs.writeFileSync(process.argv[1], process.env.DYNAMODB_LOCK_KEY + ' ' + process.pid);" +
      'setInterval(() => {}, 1000);';
    // A lease that a loaded machine's stalls do not lapse before the theft (a loss by expiry names no thief).
    const run = new CliProcess(['run', ...connection(), '--permits', '3', '--lease', '4s', 'stolen', '--', ...nodeScript(script, log)]);
    started.push(run);
    await waitUntil('the command started', () => existsSync(log) && readFileSync(log, 'utf8').includes(' '), { timeoutMs: 30_000 });
    const [key, pid] = readFileSync(log, 'utf8').split(' ') as [string, string];
    expect(key).toMatch(/^stolen#permit-[123]$/);

    await putForeignLock(bed, key, 'thief');
    const result = await run.exited;
    expect(result.code).toBe(76);
    expect(result.stderr).toContain('thief');
    expect(isRunning(Number(pid))).toBe(false);
    expect(await bed.owner(key)).toBe('thief');
  }, 60_000);
});
