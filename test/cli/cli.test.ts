/**
 * The CLI without DynamoDB: help and usage errors through `runCli` in this
 * process. The pieces behind the output and the exit codes are tested beside
 * it, one file for each module.
 */
import { describe, expect, it } from '@jest/globals';
import { readFileSync } from 'node:fs';
import { PassThrough } from 'node:stream';
import { COMMANDS, runCli } from '../../src/cli/cli.js';
import type { CliIO } from '../../src/cli/io.js';

interface Captured {
  readonly io: CliIO;
  out(): string;
  err(): string;
}

function captured(): Captured {
  let out = '';
  let err = '';
  return {
    io: { out: (text) => (out += text), err: (text) => (err += text), stdoutIsTTY: false, stdin: new PassThrough(), env: {} },
    out: () => out,
    err: () => err,
  };
}

async function cli(...argv: string[]): Promise<{ code: number; out: string; err: string }> {
  const capture = captured();
  const code = await runCli(argv, capture.io);
  return { code, out: capture.out(), err: capture.err() };
}

describe('help', () => {
  it.each(COMMANDS.map((command) => [command.name]))('%s --help shows its usage, flags, exit codes and examples', async (name) => {
    const { code, out, err } = await cli(name, '--help');
    expect(code).toBe(0);
    expect(err).toBe('');
    expect(out).toMatch(new RegExp(`^Usage: dynamodb-lock ${name} --table NAME`));
    expect(out).toContain('Exit codes:');
    expect(out).toContain('Examples:');
    expect(out).toContain('--endpoint URL');
  });

  it.each(COMMANDS.map((command) => [command.name]))('%s --help shows only its own flags, and each exit code once', async (name) => {
    const command = COMMANDS.find((c) => c.name === name);
    const { out } = await cli(name, '--help');
    const shown = [...out.matchAll(/^ {2}(?:-\w, )?(?: {4})?--([\w-]+)/gm)].map((match) => match[1]);
    const taken = new Set<string>(command?.flags);
    for (const flag of ['lease', 'heartbeat', 'json']) expect(shown.includes(flag)).toBe(taken.has(flag));
    const codes = [...(out.split('Exit codes:')[1]?.split('Examples:')[0] ?? '').matchAll(/^ {2}(\S+)/gm)].map((match) => match[1]);
    expect(codes.length).toBeGreaterThan(2);
    expect(new Set(codes).size).toBe(codes.length);
  });

  it('--version prints the version of the package, with or without a command', async () => {
    const { version } = JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as { version: string };
    for (const argv of [['--version'], ['list', '--version']]) {
      const { code, out, err } = await cli(...argv);
      expect({ code, out, err }).toEqual({ code: 0, out: `dynamodb-lock ${version}\n`, err: '' });
    }
  });

  it('--help and help list the commands and every exit code; no command at all is a usage error', async () => {
    const general = await cli('--help');
    expect(general.code).toBe(0);
    for (const command of COMMANDS) expect(general.out).toContain(`  ${command.name}`);
    for (const code of ['75', '76', '77', '128+N']) expect(general.out).toContain(`  ${code}`);
    expect(general.out).toContain('Durations are seconds (20, 1.5) or a number with a unit');
    expect((await cli('run', '--help')).out).toContain('Durations are seconds');
    expect((await cli('help', 'run')).out).toContain('Usage: dynamodb-lock run');
    const none = await cli();
    expect(none.code).toBe(2);
    expect(none.err).toContain('Commands:');
  });
});

describe('--json', () => {
  it('README and docs/cli.md name the commands without it', () => {
    const without = COMMANDS.filter((command) => !command.flags.includes('json')).map((command) => `\`${command.name}\``);
    expect(without.length).toBeGreaterThan(0);
    for (const file of ['README.md', 'docs/cli.md']) {
      const text = readFileSync(new URL(`../../${file}`, import.meta.url), 'utf8').replace(/\s+/g, ' ');
      expect(text).toContain(`\`--json\` for scripts on every command but ${without.join(', ')},`);
    }
  });
});

describe('usage errors exit with 2 before anything is started', () => {
  it.each([
    [['frobnicate'], 'unknown command "frobnicate"'],
    [['list', '--tabel', 'locks'], "Unknown option '--tabel'"],
    [['list', '--table'], 'argument missing'],
    [['list'], '--table is required'],
    [['list', '--table', 'locks', '--wait'], '--wait does not apply to list'],
    [['list', '--table', 'locks', '--lease', '5s'], '--lease does not apply to list'],
    [
      ['run', '--table', 'locks', '--json', 'job', '--', 'true'],
      '--json does not apply to run (the commands with --json: create-table, list, get, watch, release, gc)',
    ],
    [['get', '--table', 'locks'], 'get needs KEY'],
    [['get', '--table', 'locks', 'a', 'b'], 'unexpected "b"'],
    [['get', '--table', 'locks', 'a', '--', 'echo'], 'only run takes a command after --'],
    [['run', '--table', 'locks', 'job'], 'run needs a command after --'],
    [['run', '--table', 'locks', '--wait', '--timeout', '5s', 'job', '--', 'true'], 'pass --wait or --timeout, not both'],
    [
      ['run', '--table', 'locks', '--grace', '10s', 'job', '--', 'true'],
      '--grace must be at most half the safety margin of the lease, 1 s with a lease of 20 s',
    ],
    [['run', '--table', 'locks', '--timeout', 'soon', 'job', '--', 'true'], '--timeout must be a duration'],
    [
      ['run', '--table', 'locks', '--lease', '1s', '--heartbeat', '800ms', 'job', '--', 'true'],
      '--lease (1000 ms) must be at least twice --heartbeat (800 ms)',
    ],
    [['run', '--table', 'x', 'job', '--', 'true'], '--table must be 3 to 255 characters'],
    [['release', '--table', 'locks', 'job', '--yes'], 'pass --force'],
    [['release', '--table', 'locks', 'job', '--force'], 'pass --yes'],
    [['create-table', '--table', 'locks', '--billing-mode', 'free'], '--billing-mode must be on-demand or provisioned'],
    [['create-table', '--table', 'locks', '--billing-mode', 'provisioned'], 'needs --read-capacity and --write-capacity'],
    [['list', '--table', 'locks', '--local', '--endpoint', 'http://127.0.0.1:1'], '--local and --endpoint exclude each other'],
  ])('%j', async (argv, message) => {
    const { code, err, out } = await cli(...argv);
    expect(err).toContain(message);
    expect(err).toMatch(/^dynamodb-lock: /);
    expect(out).toBe('');
    expect(code).toBe(2);
  });
});
