/**
 * The heartbeat loop must never keep a process alive: a program that is done
 * exits, whether it closed its lock client or just returned while holding
 * locks (which then lapse after their lease).
 */
import { afterEach, describe, expect, it } from '@jest/globals';
import type { ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { localEndpoint } from '../../test-kit/aws.js';
import { useFaultBed } from '../../test-kit/jest/fault-bed.js';
import { isRunning, onJsonLines, outputTail, spawnTsx } from '../../test-kit/processes.js';

const SCRIPT = fileURLToPath(new URL('../../test-kit/programs/exit-process.ts', import.meta.url));
/** Generous: starting tsx and acquiring takes a few seconds on a busy machine; a stuck process never exits. */
const EXIT_WITHIN_MS = 15_000;
const KEYS = ['exit-a', 'exit-b', 'exit-c'];

const faults = useFaultBed('hb-exit');
let child: ChildProcess | undefined;

afterEach(() => {
  if (child !== undefined && isRunning(child)) child.kill('SIGKILL');
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
  const started = spawnTsx(SCRIPT, [localEndpoint(), faults.bed.tableName, ending, ...KEYS]);
  child = started;
  const lines: Outcome['lines'] = [];
  const stderr = outputTail(started.stderr);
  onJsonLines(started.stdout!, (line) => lines.push(line as Outcome['lines'][number]));
  return new Promise((resolve) => {
    const timer = setTimeout(() => resolve({ code: null, signal: null, lines, stderr: `${stderr()}\n(still running)` }), EXIT_WITHIN_MS);
    started.once('close', (code, signal) => {
      clearTimeout(timer);
      resolve({ code, signal, lines, stderr: stderr() });
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
