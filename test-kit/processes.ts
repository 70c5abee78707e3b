/**
 * The separate processes that tests start: programs of test-kit/programs/,
 * the CLI, the demo, the examples. They run from the repository root under
 * tsx; what they report comes as JSON lines on stdout.
 */
import { spawn, type ChildProcess, type SpawnOptions } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { createInterface } from 'node:readline';
import type { Readable } from 'node:stream';
import { fileURLToPath } from 'node:url';
import { isRunning as childIsRunning } from '../src/testing/child-processes.js';

export const REPO_ROOT = fileURLToPath(new URL('..', import.meta.url));

/** Starts the TypeScript program `script` with `args` (`node --import tsx`), from the repository root, stdout and stderr piped. */
export function spawnTsx(script: string, args: readonly string[] = [], options: SpawnOptions = {}): ChildProcess {
  return spawn(process.execPath, ['--import', 'tsx', script, ...args], { cwd: REPO_ROOT, stdio: ['ignore', 'pipe', 'pipe'], ...options });
}

/**
 * Calls `onValue` with each line of `stream` that parses as JSON; other lines
 * (a warning, a stack) are passed over. The caller knows what its program reports.
 */
export function onJsonLines(stream: Readable, onValue: (value: unknown) => void): void {
  createInterface({ input: stream }).on('line', (line) => {
    let value: unknown;
    try {
      value = JSON.parse(line);
    } catch {
      return;
    }
    onValue(value);
  });
}

/** The JSON lines a child process reports, as they come, and a wait for the first that matches. */
export interface ReportedLines<Line> {
  readonly lines: Line[];
  readonly stderr: () => string;
  /**
   * The first line, printed already or to come, that `matches` (with its
   * index); rejects, naming `what` and the tail of stderr, when the process
   * exits first or after `timeoutMs`.
   */
  next(matches: (line: Line, index: number) => boolean, what: string, timeoutMs: number): Promise<Line>;
}

/** Collects what `child` reports on stdout as JSON lines (each taken to be a `Line`). */
export function reportedLines<Line>(child: ChildProcess): ReportedLines<Line> {
  const lines: Line[] = [];
  const listeners = new Set<() => void>();
  const stderr = outputTail(child.stderr);
  onJsonLines(child.stdout!, (line) => {
    lines.push(line as Line);
    for (const listener of listeners) listener();
  });
  const next = (matches: (line: Line, index: number) => boolean, what: string, timeoutMs: number): Promise<Line> =>
    new Promise((resolve, reject) => {
      const check = (): boolean => {
        const found = lines.find(matches);
        if (found === undefined) return false;
        cleanup();
        resolve(found);
        return true;
      };
      const onExit = (): void => {
        cleanup();
        reject(new Error(`the process exited before ${what}; stderr:\n${stderr()}`));
      };
      const timer = setTimeout(() => {
        cleanup();
        reject(new Error(`the process did not report ${what} within ${timeoutMs} ms; stderr:\n${stderr()}`));
      }, timeoutMs);
      const listener = (): void => void check();
      const cleanup = (): void => {
        clearTimeout(timer);
        listeners.delete(listener);
        child.off('exit', onExit);
      };
      if (check()) return;
      listeners.add(listener);
      child.once('exit', onExit);
    });
  return { lines, stderr, next };
}

/** Keeps the last `chars` characters `stream` writes, for the message of a failed test; the result reads them. */
export function outputTail(stream: Readable | null, chars = 4_000): () => string {
  let tail = '';
  stream?.on('data', (chunk: Buffer) => {
    tail = (tail + chunk.toString('utf8')).slice(-chars);
  });
  return () => tail;
}

/**
 * Whether a process still runs: a child of this process that has not
 * exited, or any process `pid` that exists and is not a zombie (a killed
 * process whose parent has not collected it yet runs no code; Linux, /proc).
 */
export function isRunning(target: ChildProcess | number): boolean {
  return typeof target === 'number' ? pidIsRunning(target) : childIsRunning(target);
}

function pidIsRunning(pid: number): boolean {
  let stat: string;
  try {
    stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  } catch {
    return false;
  }
  const state = stat.slice(stat.lastIndexOf(')') + 2, stat.lastIndexOf(')') + 3);
  return state !== 'Z' && state !== 'X';
}
