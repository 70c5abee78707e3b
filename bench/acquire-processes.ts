/**
 * Child processes of the acquire benchmarks (`node --import tsx <script>`),
 * talking JSON lines on stdout and plain lines on stdin. Every process
 * started here is SIGKILLed when the benchmark process exits, also after a
 * failure, so none outlives the run.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';

const REPO_ROOT = fileURLToPath(new URL('..', import.meta.url));
const live = new Set<ChildProcess>();
process.once('exit', () => {
  for (const child of live) child.kill('SIGKILL');
});

export type Message = { readonly event: string } & Record<string, unknown>;

export interface BenchProcess {
  readonly pid: number | undefined;
  /** Resolves with the first message `event` not taken yet; rejects if the process exits first or after `timeoutMs`. */
  next(event: string, timeoutMs: number): Promise<Message>;
  send(line: string): void;
  /** SIGKILLs it; resolves once it has exited. */
  kill(): Promise<void>;
}

export function startProcess(script: string, args: readonly string[]): BenchProcess {
  const child = spawn(process.execPath, ['--import', 'tsx', fileURLToPath(new URL(script, import.meta.url)), ...args], {
    cwd: REPO_ROOT,
    stdio: ['pipe', 'pipe', 'pipe'],
  });
  live.add(child);
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  void exited.then(() => live.delete(child));
  let stderr = '';
  child.stderr.on('data', (chunk: Buffer) => {
    stderr = (stderr + chunk.toString('utf8')).slice(-2_000);
  });
  const inbox: Message[] = [];
  const waiters = new Set<() => void>();
  createInterface({ input: child.stdout }).on('line', (line) => {
    try {
      inbox.push(JSON.parse(line) as Message);
    } catch {
      return; // not ours
    }
    for (const wake of [...waiters]) wake();
  });

  const next = (event: string, timeoutMs: number): Promise<Message> =>
    new Promise((resolve, reject) => {
      const done = (): void => {
        clearTimeout(timer);
        waiters.delete(check);
      };
      const check = (): void => {
        const index = inbox.findIndex((message) => message.event === event);
        if (index < 0) return;
        done();
        resolve(inbox.splice(index, 1)[0] as Message);
      };
      const timer = setTimeout(() => {
        done();
        reject(new Error(`${script} sent no "${event}" within ${timeoutMs} ms; stderr: ${stderr}`));
      }, timeoutMs);
      waiters.add(check);
      void exited.then(() => {
        check();
        if (waiters.has(check)) {
          done();
          reject(new Error(`${script} exited before "${event}"; stderr: ${stderr}`));
        }
      });
      check();
    });

  return {
    pid: child.pid,
    next,
    send: (line) => {
      child.stdin.write(`${line}\n`);
    },
    kill: async () => {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
      await exited;
    },
  };
}

/** For the scripts: one JSON message on stdout. */
export const report = (event: string, fields: object = {}): void => {
  process.stdout.write(`${JSON.stringify({ event, ...fields })}\n`);
};

/** For the scripts: what `take()` resolved to, or undefined when it failed because `stop` aborted (the run's time is up). */
export async function unlessStopped<T>(stop: AbortSignal, take: () => Promise<T>): Promise<T | undefined> {
  try {
    return await take();
  } catch (error) {
    if (stop.aborted) return undefined;
    throw error;
  }
}

/** For the scripts: resolves on the first line `line` on stdin. */
export function lineFromParent(line: string): Promise<void> {
  return new Promise((resolve) => {
    const input = createInterface({ input: process.stdin });
    input.on('line', (received) => {
      if (received.trim() !== line) return;
      input.close();
      resolve();
    });
  });
}
