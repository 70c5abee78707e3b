/**
 * Runs a Lambda handler as the platform would, in a child process
 * (programs/lambda-runtime.ts): one execution environment whose module
 * scope serves invocation after invocation, frozen (SIGSTOP) between them
 * when the caller says so, and killed (SIGKILL) at an invocation's deadline
 * if it has not returned by then.
 */
import type { ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { isRunning, reportedLines, spawnTsx, type ReportedLines } from './processes.js';

const RUNTIME = fileURLToPath(new URL('programs/lambda-runtime.ts', import.meta.url));

/** A JSON line the environment printed: the runtime's `returned` and `failed`, or one the handler logged. */
export interface RuntimeLine {
  readonly event: string;
  readonly id?: number;
  readonly pid?: number;
  readonly [field: string]: unknown;
}

export interface InvocationOutcome {
  /** The runtime's report, or `killed` when the environment was killed at the deadline first. */
  readonly line: RuntimeLine | { readonly event: 'killed' };
  /** Monotonic time (this process's clock) at which it ended. */
  readonly at: number;
}

export class LambdaRunner {
  readonly child: ChildProcess;
  readonly exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  readonly #reported: ReportedLines<RuntimeLine>;
  #nextId = 1;

  /** Starts an environment for `handlerModule` (a path from the repository root), configured by `env`. */
  constructor(handlerModule: string, env: NodeJS.ProcessEnv) {
    this.child = spawnTsx(RUNTIME, [handlerModule], { env, stdio: ['pipe', 'pipe', 'pipe'] });
    this.#reported = reportedLines<RuntimeLine>(this.child);
    this.exited = new Promise((resolve) => this.child.once('exit', (code, signal) => resolve({ code, signal })));
  }

  /** Every line the environment printed so far. */
  get lines(): readonly RuntimeLine[] {
    return this.#reported.lines;
  }

  /**
   * Starts one invocation with `remainingMs` until its deadline. With
   * `killAtDeadline`, the environment is SIGKILLed when the deadline comes
   * and the invocation has not returned, as Lambda ends a timed-out one.
   */
  invoke(event: unknown, remainingMs: number, options: { killAtDeadline?: boolean } = {}): Promise<InvocationOutcome> {
    const id = this.#nextId++;
    this.child.stdin!.write(`${JSON.stringify({ id, remainingMs, event })}\n`);
    const ended = this.next((line) => line.id === id && (line.event === 'returned' || line.event === 'failed'), remainingMs + 30_000);
    if (options.killAtDeadline !== true) return ended.then((line) => ({ line, at: performance.now() }));
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        this.kill();
        resolve({ line: { event: 'killed' }, at: performance.now() });
      }, remainingMs);
      ended.then(
        (line) => {
          clearTimeout(timer);
          resolve({ line, at: performance.now() });
        },
        (error: unknown) => {
          clearTimeout(timer);
          if (isRunning(this.child)) reject(error);
        },
      );
    });
  }

  /** The first line (already printed or to come) that `matches`; rejects if the environment exits first or after `timeoutMs`. */
  next(matches: (line: RuntimeLine) => boolean, timeoutMs = 30_000): Promise<RuntimeLine> {
    return this.#reported.next(matches, 'the line awaited', timeoutMs);
  }

  /** Freezes the environment between (or during) invocations, as Lambda does. */
  freeze(): void {
    this.child.kill('SIGSTOP');
  }

  thaw(): void {
    this.child.kill('SIGCONT');
  }

  /** No more invocations: the runtime's main module returns. */
  end(): void {
    this.child.stdin!.end();
  }

  kill(): void {
    if (isRunning(this.child)) this.child.kill('SIGKILL');
  }
}
