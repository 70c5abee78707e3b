/**
 * The CLI without DynamoDB: help and usage errors through `runCli` in this
 * process, and the pieces behind the output and the exit codes.
 */
import { describe, expect, it } from '@jest/globals';
import { readFileSync } from 'node:fs';
import { PassThrough } from 'node:stream';
import { LockTableDoesNotExistError } from '../../src/index.js';
import { COMMANDS, runCli } from '../../src/cli/cli.js';
import { formatDuration, parseDuration } from '../../src/cli/durations.js';
import { explainError } from '../../src/cli/explain-error.js';
import { parseCommandLine } from '../../src/cli/flags.js';
import type { CliIO } from '../../src/cli/io.js';
import { lockJson, previewData } from '../../src/cli/lock-format.js';
import { runExitCode } from '../../src/cli/watched-command.js';
import { renderFields, renderTable } from '../../src/cli/text-table.js';
import { InterruptedError, UsageError } from '../../src/cli/usage-error.js';
import { watchEventOf } from '../../src/cli/watch-command.js';
import { describeLockKey } from '../../src/lock-key.js';

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

describe('usage errors exit with 2 before anything is started', () => {
  it.each([
    [['frobnicate'], 'unknown command "frobnicate"'],
    [['list', '--tabel', 'locks'], "Unknown option '--tabel'"],
    [['list', '--table'], "argument missing"],
    [['list'], '--table is required'],
    [['list', '--table', 'locks', '--wait'], '--wait does not apply to list'],
    [['list', '--table', 'locks', '--lease', '5s'], '--lease does not apply to list'],
    [['run', '--table', 'locks', '--json', 'job', '--', 'true'], '--json does not apply to run'],
    [['get', '--table', 'locks'], 'get needs KEY'],
    [['get', '--table', 'locks', 'a', 'b'], 'unexpected "b"'],
    [['get', '--table', 'locks', 'a', '--', 'echo'], 'only run takes a command after --'],
    [['run', '--table', 'locks', 'job'], 'run needs a command after --'],
    [['run', '--table', 'locks', '--wait', '--timeout', '5s', 'job', '--', 'true'], 'pass --wait or --timeout, not both'],
    [['run', '--table', 'locks', '--grace', '10s', 'job', '--', 'true'], '--grace must be at most half the safety margin of the lease, 1 s with a lease of 20 s'],
    [['run', '--table', 'locks', '--timeout', 'soon', 'job', '--', 'true'], '--timeout must be a duration'],
    [['run', '--table', 'locks', '--lease', '1s', '--heartbeat', '800ms', 'job', '--', 'true'], '--lease (1000 ms) must be at least twice --heartbeat (800 ms)'],
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

describe('parseCommandLine', () => {
  it('leaves everything after the first -- to the command, flags included', () => {
    const line = parseCommandLine(['run', '--table', 'locks', 'job', '--', 'sh', '-c', 'echo --help', '--', '--wait']);
    expect(line.command).toBe('run');
    expect(line.positionals).toEqual(['job']);
    expect(line.commandArgv).toEqual(['sh', '-c', 'echo --help', '--', '--wait']);
    expect(line.flags.string('table')).toBe('locks');
    expect(line.flags.boolean('wait')).toBe(false);
  });
});

describe('durations', () => {
  it.each([
    ['5', 5_000],
    ['1.5', 1_500],
    ['0.25', 250],
    ['500ms', 500],
    ['20s', 20_000],
    ['1.5s', 1_500],
    ['2m', 120_000],
    ['1h', 3_600_000],
  ])('%s is %d ms (a bare number is seconds, as for timeout(1) and flock -w)', (text, ms) => {
    expect(parseDuration('lease', text)).toBe(ms);
  });

  it.each(['', '0', '-5', '0.0001', '1.5ms', '10 minutes', '5d', 's'])('%j is refused with a UsageError naming the flag', (text) => {
    expect(() => parseDuration('lease', text)).toThrow(UsageError);
    expect(() => parseDuration('lease', text)).toThrow(/--lease/);
  });

  it('reads back for people', () => {
    expect([250, 1_000, 1_500, 20_000, 300_000].map(formatDuration)).toEqual(['250 ms', '1 s', '1.5 s', '20 s', '5 min']);
  });
});

describe('showing locks', () => {
  const utf8 = (text: string): Uint8Array => new TextEncoder().encode(text);

  it('previews text data, cut to length, and binary or control-character data as hex', () => {
    expect(previewData(undefined)).toBe('');
    expect(previewData(utf8('{"host":"a"}'))).toBe('{"host":"a"}');
    expect(previewData(utf8('x'.repeat(50)), 10)).toBe(`${'x'.repeat(9)}…`);
    expect(previewData(new Uint8Array([0xff, 0x00, 0x10]))).toBe('0xff0010 (3 bytes)');
    expect(previewData(utf8('a\u001b[2Jb'))).toMatch(/^0x611b5b324a62 \(6 bytes\)$/);
  });

  it('gives scripts the data as text when it is UTF-8, and always as base64', () => {
    const base = { partitionKey: 'k', sortKey: undefined, ownerName: 'o', recordVersionNumber: 'r', leaseDuration: 20_000, isReleased: false };
    expect(lockJson({ ...base, data: utf8('hi') })).toEqual({ ...base, sortKey: null, dataText: 'hi', dataBase64: 'aGk=' });
    expect(lockJson({ ...base, data: new Uint8Array([0xc3]) })).toMatchObject({ dataText: null, dataBase64: 'ww==' });
    expect(lockJson({ ...base, data: undefined })).toMatchObject({ dataText: null, dataBase64: null });
  });

  it('aligns columns and escapes control characters that came from the table', () => {
    expect(renderTable(['KEY', 'OWNER'], [['a', 'me'], ['longer', 'you\n']])).toBe('KEY     OWNER\na       me\nlonger  you\\u000a\n');
    expect(renderFields([['key', '"a"'], ['owner', 'me']])).toBe('key    "a"\nowner  me\n');
    expect(describeLockKey({ partitionKey: 'a b' })).toBe('"a b"');
    expect(describeLockKey({ partitionKey: 'a', sortKey: '' })).toBe('"a"/""');
  });

  it('names what a watch saw', () => {
    const lock = (ownerName: string) => ({ partitionKey: 'k', sortKey: undefined, ownerName, recordVersionNumber: 'r', leaseDuration: 1, isReleased: false, data: undefined });
    expect(watchEventOf(undefined, undefined, true)).toBe('free');
    expect(watchEventOf(undefined, lock('a'), true)).toBe('held');
    expect(watchEventOf(undefined, lock('a'), false)).toBe('acquired');
    expect(watchEventOf(lock('a'), lock('a'), false)).toBe('heartbeat');
    expect(watchEventOf(lock('a'), lock('b'), false)).toBe('acquired');
    expect(watchEventOf(lock('a'), undefined, false)).toBe('free');
  });
});

describe('exit codes', () => {
  it("of run: the command's own, 128 + signal, 126/127 when it cannot start, 1 unwatched, 76 whenever the lock was lost", () => {
    const exited = (code: number | null, signal: NodeJS.Signals | null) => ({ kind: 'exited', code, signal, expired: false }) as const;
    expect(runExitCode(exited(0, null), false)).toBe(0);
    expect(runExitCode(exited(7, null), false)).toBe(7);
    expect(runExitCode(exited(null, 'SIGTERM'), false)).toBe(143);
    expect(runExitCode(exited(null, 'SIGKILL'), false)).toBe(137);
    expect(runExitCode({ kind: 'not-started', code: 'ENOENT', message: 'spawn nope ENOENT' }, false)).toBe(127);
    expect(runExitCode({ kind: 'not-started', code: 'EACCES', message: 'spawn ./x EACCES' }, false)).toBe(126);
    expect(runExitCode({ kind: 'unwatched', message: 'the watchdog process ended' }, false)).toBe(1);
    expect(runExitCode(exited(0, null), true)).toBe(76);
    expect(runExitCode(exited(null, 'SIGKILL'), true)).toBe(76);
  });

  it('of errors, each with a hint that names the fix', () => {
    expect(explainError(new UsageError('bad', 'run'))).toEqual({ message: 'bad (see dynamodb-lock run --help)', exitCode: 2 });
    expect(explainError(new InterruptedError('SIGINT'))).toEqual({ message: undefined, exitCode: 130 });
    const missing = explainError(new LockTableDoesNotExistError('locks'));
    expect(missing.exitCode).toBe(1);
    expect(missing.message).toContain('dynamodb-lock create-table --table locks');
    expect(explainError(new Error('Region is missing')).message).toContain('AWS_REGION');
    const refused = Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:1'), { code: 'ECONNREFUSED' });
    expect(explainError(refused).message).toContain('--endpoint');
    expect(explainError(Object.assign(new Error('Table already exists'), { name: 'ResourceInUseException' })).message).toContain('--if-not-exists');
  });
});
