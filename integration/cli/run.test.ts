/**
 * `dynamodb-lock run`, the real CLI in a process of its own against
 * DynamoDB Local: exit codes, mutual exclusion between two runs, and the
 * command stopped when the lock is stolen.
 */
import { afterEach, beforeEach, describe, expect, it } from '@jest/globals';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { localEndpoint } from '../../test-kit/aws.js';
import { CliProcess, cliEnvironment, runCli } from '../../test-kit/cli-process.js';
import { FaultProxy, dynamoDBErrorReply, operationOf, refuseDeletes } from '../../test-kit/fault-proxy.js';
import { isRunning } from '../../test-kit/processes.js';
import { putForeignLock } from '../../test-kit/tamper.js';
import { LockTestBed, text, waitUntil } from '../../test-kit/test-locks.js';

let bed: LockTestBed;
let dir: string;
const started: CliProcess[] = [];
const proxies: FaultProxy[] = [];

beforeEach(async () => {
  bed = new LockTestBed('cli-run');
  await bed.createTable();
  dir = mkdtempSync(join(tmpdir(), 'cli-run-'));
});

afterEach(async () => {
  for (const cli of started.splice(0)) cli.kill();
  await Promise.all(proxies.splice(0).map((proxy) => proxy.close()));
  await bed.dispose();
  rmSync(dir, { recursive: true, force: true });
});

const THROTTLED = { action: 'respond', reply: dynamoDBErrorReply('ThrottlingException') } as const;
const connection = (): string[] => ['--endpoint', localEndpoint(), '--table', bed.tableName];
/** `node -e SCRIPT ARGS...`: child commands that need nothing but Node. */
const nodeScript = (script: string, ...args: string[]): string[] => [process.execPath, '-e', script, ...args];

describe('run KEY -- COMMAND', () => {
  it("exits with the command's exit code, and releases the lock afterwards", async () => {
    const result = await runCli(['run', ...connection(), 'exit-code', '--', ...nodeScript('process.exit(7)')]);
    expect(result.stderr).toBe('');
    expect(result.code).toBe(7);
    expect(await bed.item('exit-code')).toBeUndefined();
  });

  it('exits with 127 when the command does not exist, and releases the lock', async () => {
    const result = await runCli(['run', ...connection(), 'missing-command', '--', join(dir, 'no-such-program')]);
    expect(result.code).toBe(127);
    expect(result.stderr).toContain('cannot run');
    expect(await bed.item('missing-command')).toBeUndefined();
  });

  it('exits with 126 when the command cannot be run for a reason spawn() throws at once (a file taken for a folder), and releases the lock', async () => {
    // Node reports ENOENT and EACCES as events, but throws ENOTDIR and ENAMETOOLONG from spawn() itself.
    const notAFolder = join(dir, 'plain-file');
    writeFileSync(notAFolder, '');
    const result = await runCli(['run', ...connection(), 'not-a-folder', '--', join(notAFolder, 'program')]);
    expect(result.code).toBe(126);
    expect(result.stderr).toContain('cannot run');
    expect(result.stderr).not.toContain('watchdog');
    expect(await bed.item('not-a-folder')).toBeUndefined();
  });

  it('exits with 75 without running the command while someone else holds the lock, at once or after --timeout', async () => {
    const holder = bed.client({ ownerName: 'busy-holder' });
    await holder.acquireLock('busy');
    const marker = join(dir, 'ran');
    const command = nodeScript("require('fs').writeFileSync(process.argv[1], 'ran')", marker);

    const atOnce = await runCli(['run', ...connection(), 'busy', '--', ...command]);
    expect(atOnce.code).toBe(75);
    expect(atOnce.stderr).toContain('busy-holder');
    // A bare number is seconds, as for timeout(1).
    const afterTimeout = await runCli(['run', ...connection(), '--timeout', '1.5', 'busy', '--', ...command]);
    expect(afterTimeout.code).toBe(75);
    expect(afterTimeout.stderr).toContain('within 1.5 s');

    expect(existsSync(marker)).toBe(false);
    expect(await bed.owner('busy')).toBe('busy-holder');
  });

  it("waits as long as a --timeout longer than Node's timers take (600h), and runs the command once the lock is free", async () => {
    const holder = bed.client({ ownerName: 'long-holder' });
    const lock = await holder.acquireLock('long-wait');
    const marker = join(dir, 'ran');
    const proxy = await FaultProxy.start(localEndpoint());
    proxies.push(proxy);
    const cli = new CliProcess([
      'run',
      '--endpoint',
      proxy.endpoint,
      '--table',
      bed.tableName,
      '--timeout',
      '600h',
      'long-wait',
      '--',
      ...nodeScript("require('fs').writeFileSync(process.argv[1], 'ran')", marker),
    ]);
    started.push(cli);
    // A timer cut short by Node's limit would end the wait after the first read.
    const reads = (): number => proxy.exchanges.filter((exchange) => operationOf(exchange.request) === 'GetItem').length;
    await waitUntil('read the lock twice, or exited', () => reads() >= 2 || !isRunning(cli.child), { timeoutMs: 30_000 });
    expect(cli.stderr).toBe('');
    expect(isRunning(cli.child)).toBe(true);

    await lock.release();
    const result = await cli.exited;
    expect(result.stderr).toBe('');
    expect(result.code).toBe(0);
    expect(existsSync(marker)).toBe(true);
  });

  describe('exits with 1, not 75, when DynamoDB gives no usable answer: nobody is known to hold the lock', () => {
    const marker = (): string => join(dir, 'ran');
    const command = (): string[] => nodeScript("require('fs').writeFileSync(process.argv[1], 'ran')", marker());

    it.each([[[]], [['--timeout', '1s']]])('refused connections (%j)', async (wait) => {
      const proxy = await FaultProxy.start(localEndpoint());
      await proxy.close(); // nothing listens on its port any more
      const result = await runCli(['run', '--endpoint', proxy.endpoint, '--table', bed.tableName, ...wait, 'job', '--', ...command()]);
      expect(result.stderr).toContain('ECONNREFUSED');
      expect(result.code).toBe(1);
      expect(existsSync(marker())).toBe(false);
    });

    it('no reply at all: every request is left unanswered', async () => {
      const proxy = await FaultProxy.start(localEndpoint());
      try {
        proxy.blackhole();
        // One attempt per call (the SDK reads AWS_MAX_ATTEMPTS), so that the test waits for one request timeout, not three.
        const env = { ...cliEnvironment(), AWS_MAX_ATTEMPTS: '1' };
        const result = await runCli(['run', '--endpoint', proxy.endpoint, '--table', bed.tableName, 'job', '--', ...command()], {
          env,
          timeoutMs: 45_000,
        });
        expect(result.stderr).toContain('cannot reach DynamoDB');
        expect(result.code).toBe(1);
        expect(existsSync(marker())).toBe(false);
      } finally {
        await proxy.close();
      }
    }, 60_000);

    it('throttled on every attempt', async () => {
      const proxy = await FaultProxy.start(localEndpoint());
      try {
        proxy.setRule(() => THROTTLED);
        // One attempt per call, as above: the SDK's backoffs between throttled attempts took seconds.
        const env = { ...cliEnvironment(), AWS_MAX_ATTEMPTS: '1' };
        const result = await runCli(['run', '--endpoint', proxy.endpoint, '--table', bed.tableName, 'job', '--', ...command()], { env });
        expect(result.stderr).toContain('ThrottlingException');
        expect(result.code).toBe(1);
        expect(existsSync(marker())).toBe(false);
      } finally {
        await proxy.close();
      }
    });

    it('credentials refused', async () => {
      const env = { ...cliEnvironment(), AWS_ACCESS_KEY_ID: 'not_a_valid_key' };
      const result = await runCli(['run', ...connection(), 'job', '--', ...command()], { env });
      expect(result.stderr).toContain('credentials');
      expect(result.code).toBe(1);
      expect(existsSync(marker())).toBe(false);
    });
  });

  it('--wait through an outage says on stderr that it retries, once for a run of the same failure, and keeps waiting', async () => {
    const proxy = await FaultProxy.start(localEndpoint());
    try {
      proxy.setRule(() => THROTTLED);
      const marker = join(dir, 'ran');
      // One attempt per call (the SDK reads AWS_MAX_ATTEMPTS): each exchange is an attempt of the lock's, not an SDK backoff.
      const env = { ...cliEnvironment(), AWS_MAX_ATTEMPTS: '1' };
      const run = new CliProcess(
        [
          'run',
          '--endpoint',
          proxy.endpoint,
          '--table',
          bed.tableName,
          '--wait',
          'outage',
          '--',
          ...nodeScript("require('fs').writeFileSync(process.argv[1], 'ran')", marker),
        ],
        { env },
      );
      started.push(run);
      const warning = /^dynamodb-lock: warning: lock acquisition attempt failed; retrying \(lock "outage"\): ThrottlingException: /m;
      await waitUntil('a warning on stderr', () => warning.test(run.stderr), { timeoutMs: 30_000 });
      // Several more attempts fail (a poll a second) without another line.
      const attempts = proxy.exchanges.length;
      await waitUntil('more attempts', () => proxy.exchanges.length >= attempts + 6, { timeoutMs: 30_000 });
      expect(isRunning(run.child)).toBe(true);

      run.child.kill('SIGTERM');
      const result = await run.exited;
      expect(result.code).toBe(143); // 128 + SIGTERM
      // Once when it came, and at the end with how often it came since.
      const told = result.stderr.match(new RegExp(`${warning.source}.*$`, 'gm'));
      expect(told).toHaveLength(2);
      expect(told?.[0]).not.toContain('times in the last');
      expect(told?.[1]).toMatch(/\((\d+) times in the last \d+ s\)$/);
      expect(result.stdout).toBe('');
      expect(existsSync(marker)).toBe(false);
    } finally {
      await proxy.close();
    }
  }, 60_000);

  it('never lets two runs on one key overlap: the second waits (--wait) until the first has exited', async () => {
    const log = join(dir, 'intervals.log');
    // Each command logs its start and end on the machine's monotonic clock, 800 ms apart.
    const script =
      "const fs = require('fs'); const log = process.argv[1];" +
      "fs.appendFileSync(log, 'start ' + process.hrtime.bigint() + '\\n');" +
      "setTimeout(() => fs.appendFileSync(log, 'end ' + process.hrtime.bigint() + '\\n'), 800);";
    const runs = await Promise.all(
      ['first', 'second'].map((owner) =>
        runCli(['run', ...connection(), '--wait', '--owner', owner, 'shared-job', '--', ...nodeScript(script, log)]),
      ),
    );
    expect(runs.map((run) => run.code)).toEqual([0, 0]);

    const lines = readFileSync(log, 'utf8')
      .trim()
      .split('\n')
      .map((line) => line.split(' ') as [string, string]);
    expect(lines.map(([what]) => what)).toEqual(['start', 'end', 'start', 'end']);
    const [, firstEnd] = lines[1] as [string, string];
    const [, secondStart] = lines[2] as [string, string];
    expect(BigInt(secondStart)).toBeGreaterThan(BigInt(firstEnd));
    expect(await bed.item('shared-job')).toBeUndefined();
  }, 60_000);

  it("a release DynamoDB refuses (a role without DeleteItem): says the lock lapses, lets it lapse, and still exits with the command's code", async () => {
    const proxy = await FaultProxy.start(localEndpoint());
    try {
      proxy.setRule(refuseDeletes);
      const result = await runCli([
        'run',
        '--endpoint',
        proxy.endpoint,
        '--table',
        bed.tableName,
        'denied-release',
        '--',
        ...nodeScript('process.exit(7)'),
      ]);
      expect(result.code).toBe(7);
      expect(result.stderr).toContain('could not release the lock');
      expect(result.stderr).toContain('it lapses after its lease');
      // Not held again, to be released once more by close(), whose failure would end the run with an error of its own.
      expect(result.stderr).not.toContain('failed to release');
      expect(await bed.owner('denied-release')).toBeDefined(); // still there: it lapses
    } finally {
      await proxy.close();
    }
  });

  it('runs its command when the winning write was answered late and its renewal throttled: the lock won is the lock held', async () => {
    const proxy = await FaultProxy.start(localEndpoint());
    try {
      // The write is applied and answered after a heartbeat period; every attempt of the renewal that follows is throttled.
      let renewal: string | undefined;
      proxy.setRule((request) => {
        const operation = operationOf(request);
        if (operation === 'PutItem' && renewal === undefined) return { action: 'forward', delayMs: 2_400 };
        if (operation !== 'UpdateItem') return { action: 'forward' };
        renewal ??= request.headers['amz-sdk-invocation-id'];
        return renewal === request.headers['amz-sdk-invocation-id'] ? THROTTLED : { action: 'forward' };
      });
      // A DynamoDB Local just started takes seconds over its first request of each kind, more than a heartbeat period.
      const warm = bed.client({ ownerName: 'warm-up' });
      const warmLock = await warm.acquireLock('warm-up');
      await warm.sendHeartbeat(warmLock);
      await warmLock.release();
      const marker = join(dir, 'ran');
      const command = nodeScript("require('fs').writeFileSync(process.argv[1], 'ran')", marker);
      const args = ['--endpoint', proxy.endpoint, '--table', bed.tableName, '--lease', '8s', '--heartbeat', '2s', 'late-win'];
      const result = await runCli(['run', ...args, '--', ...command]);
      expect(result.stderr).toBe('');
      expect(result.code).toBe(0);
      expect(existsSync(marker)).toBe(true);
      expect(renewal).toBeDefined();
      expect(await bed.item('late-win')).toBeUndefined();
    } finally {
      await proxy.close();
    }
  });

  it('stops its command when the lock is stolen: SIGTERM, then SIGKILL after --grace, and exits with 76', async () => {
    const marker = join(dir, 'child.log');
    // The command ignores SIGTERM, so only the SIGKILL after the grace period ends it.
    const script =
      "const fs = require('fs'); const log = process.argv[1];" +
      "process.on('SIGTERM', () => fs.appendFileSync(log, 'SIGTERM\\n'));" +
      "fs.writeFileSync(log, 'started ' + process.pid + '\\n');" +
      'setInterval(() => {}, 1000);';
    // A lease that a loaded machine's stalls do not lapse before the theft (which would be a loss by expiry, no thief named);
    // its heartbeats, a second apart, still find the thief at once.
    const run = new CliProcess(['run', ...connection(), '--lease', '4s', '--grace', '50ms', 'stolen', '--', ...nodeScript(script, marker)]);
    started.push(run);
    await waitUntil('the command started', () => existsSync(marker) && readFileSync(marker, 'utf8').includes('started'), { timeoutMs: 30_000 });
    const pid = Number(/started (\d+)/.exec(readFileSync(marker, 'utf8'))?.[1]);
    expect(isRunning(pid)).toBe(true);
    const stored = await bed.item('stolen');
    expect(JSON.parse(text(stored?.['data']?.B) as string)).toMatchObject({ pid: expect.any(Number), command: 'node' });

    // Another client takes the lock (as a Java client does after our heartbeats failed): our next heartbeat is refused.
    await putForeignLock(bed, 'stolen', 'thief');
    const result = await run.exited;

    expect(result.code).toBe(76);
    expect(result.stderr).toContain('thief');
    // Told once, with what is done about it: not again by the client's own warning.
    expect(result.stderr.split('\n').filter((line) => line.includes('thief'))).toEqual([expect.stringContaining('sending SIGTERM')]);
    expect(readFileSync(marker, 'utf8')).toContain('SIGTERM');
    expect(isRunning(pid)).toBe(false);
    expect(await bed.owner('stolen')).toBe('thief'); // the thief's lock is left alone
  }, 60_000);
});
