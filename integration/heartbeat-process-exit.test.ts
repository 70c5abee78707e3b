/**
 * The heartbeat loop must never keep a process alive: a program that is done
 * exits, whether it closed its lock client or just returned while holding
 * locks (which then lapse after their lease).
 */
import { afterEach, describe, expect, it } from '@jest/globals';
import { spawn, type ChildProcess } from 'node:child_process';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { localEndpoint } from '../test-kit/aws.js';
import { useFaultBed } from '../test-kit/jest/fault-bed.js';

const SCRIPT = fileURLToPath(new URL('../test-kit/programs/exit-process.ts', import.meta.url));
const REPO_ROOT = fileURLToPath(new URL('..', import.meta.url));
/** Generous: starting tsx and acquiring takes a few seconds on a busy machine; a stuck process never exits. */
const EXIT_WITHIN_MS = 15_000;
const KEYS = ['exit-a', 'exit-b', 'exit-c'];

const faults = useFaultBed('hb-exit');
let child: ChildProcess | undefined;

afterEach(() => {
  if (child !== undefined && child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
  child = undefined;
});

interface Outcome {
  readonly code: number | null;
  readonly signal: NodeJS.Signals | null;
  readonly lines: Array<{ event: string; locks?: Array<{ key: string; rvn: string; state: string }>; states?: string[]; message?: string }>;
  readonly stderr: string;
}

/** Runs the program; resolves when it exits, or with `code: null` if it is still running after the deadline. */
function run(ending: 'return' | 'close'): Promise<Outcome> {
  const started = spawn(process.execPath, ['--import', 'tsx', SCRIPT, localEndpoint(), faults.bed.tableName, ending, ...KEYS], {
    cwd: REPO_ROOT,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  child = started;
  const lines: Outcome['lines'] = [];
  let stderr = '';
  started.stderr?.on('data', (chunk: Buffer) => (stderr = (stderr + chunk.toString('utf8')).slice(-4_000)));
  createInterface({ input: started.stdout }).on('line', (line) => {
    try {
      lines.push(JSON.parse(line) as Outcome['lines'][number]);
    } catch {
      // not one of the program's reports
    }
  });
  return new Promise((resolve) => {
    const timer = setTimeout(() => resolve({ code: null, signal: null, lines, stderr: `${stderr}\n(still running)` }), EXIT_WITHIN_MS);
    started.once('close', (code, signal) => {
      clearTimeout(timer);
      resolve({ code, signal, lines, stderr });
    });
  });
}

/** Exit code 0 by itself; on failure, shows what the program reported and printed. */
function expectCleanExit(outcome: Outcome): void {
  const seen = { code: outcome.code, signal: outcome.signal };
  const details = seen.code === 0 ? {} : { lines: outcome.lines, stderr: outcome.stderr };
  expect({ ...seen, ...details }).toEqual({ code: 0, signal: null });
}

describe('a process holding locks with heartbeats running', () => {
  it('exits by itself (code 0) when its main module returns without closing the client', async () => {
    const outcome = await run('return');

    expectCleanExit(outcome);
    const holding = outcome.lines.find((line) => line.event === 'holding');
    expect(holding?.locks?.map((lock) => [lock.key, lock.state])).toEqual(KEYS.map((key) => [key, 'held']));
    // It exited holding them: the items are still its own, left to lapse.
    for (const key of KEYS) expect(await faults.bed.owner(key)).toBe('exiting-process');
  }, 30_000);

  it('exits by itself (code 0) after client.close(), having released its locks', async () => {
    const outcome = await run('close');

    expectCleanExit(outcome);
    expect(outcome.lines.find((line) => line.event === 'closed')?.states).toEqual(KEYS.map(() => 'released'));
    for (const key of KEYS) expect(await faults.bed.item(key)).toBeUndefined();
  }, 30_000);
});
