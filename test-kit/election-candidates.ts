/**
 * Starts election-candidate.ts processes and collects what they report into
 * one log, in arrival order. Used by the election tests and the demo.
 * `dispose()` kills whatever still runs; call it in `finally`/`afterEach`.
 */
import type { ChildProcess } from 'node:child_process';
import { EventEmitter } from 'node:events';
import { fileURLToPath } from 'node:url';
import { isRunning, onJsonLines, outputTail, spawnTsx } from './processes.js';

export interface CandidateEvent {
  readonly event: 'campaigning' | 'leader' | 'leading' | 'heartbeat' | 'lost' | 'resigned' | 'stopped' | 'error';
  readonly name: string;
  readonly pid: number;
  /** Monotonic nanoseconds (process.hrtime.bigint()) as a decimal string. */
  readonly t: string;
  readonly rvn?: string;
  readonly reason?: string;
  readonly message?: string;
  readonly leaseMs?: number;
}

export interface CandidateOptions {
  readonly endpoint: string;
  readonly table: string;
  readonly key: string;
  readonly leaseMs: number;
  readonly heartbeatMs: number;
  readonly refreshMs: number;
}

const CANDIDATE_SCRIPT = fileURLToPath(new URL('./programs/election-candidate.ts', import.meta.url));
const STOP_GRACE_MS = 5_000;

export class Candidates {
  /** Every event of every candidate, in the order they arrived. */
  readonly log: CandidateEvent[] = [];
  readonly #children = new Map<string, ChildProcess>();
  readonly #stderr = new Map<string, () => string>();
  readonly #arrivals = new EventEmitter();
  readonly #options: CandidateOptions;

  constructor(options: CandidateOptions) {
    this.#options = options;
  }

  /** Starts a candidate named `name`, with `address` in its data; it campaigns at once. */
  start(name: string, address = ''): void {
    const o = this.#options;
    const args = ['--endpoint', o.endpoint, '--table', o.table, '--key', o.key, '--name', name, '--address', address];
    args.push('--lease', String(o.leaseMs), '--heartbeat', String(o.heartbeatMs), '--refresh', String(o.refreshMs));
    const child = spawnTsx(CANDIDATE_SCRIPT, args, {
      stdio: ['pipe', 'pipe', 'pipe'],
      env: { ...process.env, AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED: 'true' },
    });
    this.#children.set(name, child);
    this.#stderr.set(name, outputTail(child.stderr));
    onJsonLines(child.stdout!, (value) => {
      const event = value as CandidateEvent;
      this.log.push(event);
      this.#arrivals.emit('event', event);
    });
    child.stdin?.on('error', () => undefined); // a killed candidate's stdin may break mid-write
  }

  /** Calls `listener` with each event as it arrives; returns a function that unsubscribes. */
  onEvent(listener: (event: CandidateEvent) => void): () => void {
    this.#arrivals.on('event', listener);
    return () => this.#arrivals.off('event', listener);
  }

  /**
   * The first event at or after log index `since` that matches; rejects
   * after `timeoutMs`, or with `signal.reason` as soon as `signal` aborts.
   */
  waitFor(
    what: string,
    matches: (event: CandidateEvent) => boolean,
    { timeoutMs, since = 0, signal }: { timeoutMs: number; since?: number; signal?: AbortSignal },
  ): Promise<CandidateEvent> {
    const found = this.log.slice(since).find(matches);
    if (found !== undefined) return Promise.resolve(found);
    return new Promise((resolve, reject) => {
      const finish = (settle: () => void): void => {
        clearTimeout(timer);
        unsubscribe();
        signal?.removeEventListener('abort', onAbort);
        settle();
      };
      const onAbort = (): void => finish(() => reject(signal?.reason));
      const timer = setTimeout(
        () => finish(() => reject(new Error(`no candidate reported ${what} within ${timeoutMs} ms; stderr:\n${this.stderr()}`))),
        timeoutMs,
      );
      const unsubscribe = this.onEvent((event) => {
        if (matches(event)) finish(() => resolve(event));
      });
      if (signal?.aborted) onAbort();
      else signal?.addEventListener('abort', onAbort, { once: true });
    });
  }

  /** Sends a command line to a candidate's stdin. */
  send(name: string, command: 'resign' | 'campaign' | 'stop'): void {
    this.#children.get(name)?.stdin?.write(`${command}\n`);
  }

  /** Sends `signal` to a candidate; resolves once it has exited. */
  async kill(name: string, signal: NodeJS.Signals = 'SIGKILL'): Promise<void> {
    const child = this.#children.get(name);
    if (child === undefined || !isRunning(child)) return;
    const exited = new Promise((resolve) => child.once('exit', resolve));
    child.kill(signal);
    await exited;
  }

  /** Asks every candidate to stop (resigning if it leads), SIGKILLs those still running after a grace period. */
  async stopAll(): Promise<void> {
    const running = [...this.#children].filter(([, child]) => isRunning(child));
    await Promise.all(
      running.map(async ([name, child]) => {
        const exited = new Promise((resolve) => child.once('exit', resolve));
        this.send(name, 'stop');
        const timer = setTimeout(() => child.kill('SIGKILL'), STOP_GRACE_MS);
        await exited;
        clearTimeout(timer);
      }),
    );
  }

  /** SIGKILLs every candidate still running. Never throws. */
  dispose(): void {
    for (const child of this.#children.values()) if (isRunning(child)) child.kill('SIGKILL');
  }

  stderr(): string {
    return [...this.#stderr].map(([name, tail]) => `[${name}] ${tail()}`).join('\n');
  }
}
