/**
 * The java process of DynamoDB Local: spawned on a free port of 127.0.0.1,
 * polled until it answers, stopped; another port is tried when it loses its
 * port to someone else at start.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { createServer } from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';
import { DynamoDBClient, type DynamoDBClientConfig } from '@aws-sdk/client-dynamodb';
import { listOneTable } from '../dynamodb/lock-table.js';
import { isRunning, killOnExit } from './child-processes.js';
import { findDynamoDBLocalJar, JAVA_NEEDED } from './dynamodb-local-jar.js';

export interface ServerSettings {
  readonly startupTimeoutMs: number;
  readonly maxAttempts: number;
  readonly killGraceMs: number;
  readonly java: string;
  readonly optimizeFor: 'startup' | 'throughput';
}

const HOST = '127.0.0.1';
/** Short: a start takes seconds, and a refused connection costs next to nothing. */
const READY_POLL_MS = 50;
const OUTPUT_TAIL_CHARS = 4_000;
/**
 * For a quick start, the JVM's quick compiler (C1) only: with C2 too, a start
 * takes about twice the CPU, and C2 saves more than it costs only after some
 * tens of thousands of requests (about 30 % less CPU per request from then on;
 * measured on DynamoDB Local 3.3, Java 17).
 */
const JVM_FLAGS = { startup: ['-XX:TieredStopAtLevel=1'], throughput: [] } as const;

/**
 * A running server, or the reason why none could start. `signal` ends the
 * attempt at once, its process stopped; the promise then rejects with the
 * signal's reason.
 */
export async function startServer(settings: ServerSettings, signal: AbortSignal): Promise<ServerProcess> {
  signal.throwIfAborted(); // before looking for the jar: a stopped server needs none
  const { jar, libraries } = findDynamoDBLocalJar();
  const startedAt = performance.now();
  const deadline = startedAt + settings.startupTimeoutMs;
  const failures: string[] = [];
  for (let attempt = 1; attempt <= settings.maxAttempts && performance.now() < deadline; attempt++) {
    signal.throwIfAborted();
    const port = await freePort();
    const child = spawn(
      settings.java,
      [
        ...JVM_FLAGS[settings.optimizeFor],
        `-Djava.library.path=${libraries}`,
        '-jar',
        jar,
        '-inMemory',
        '-sharedDb',
        '-disableTelemetry',
        '-port',
        String(port),
      ],
      { stdio: ['ignore', 'pipe', 'pipe'] },
    );
    const server = new ServerProcess(child, port, settings.killGraceMs);
    const outcome = await server.waitUntilReady(deadline, signal);
    if (outcome === 'ready') return server;
    await server.stop();
    if (outcome === 'aborted') throw signal.reason;
    failures.push(`attempt ${attempt} on port ${port}: ${server.describeFailure(outcome)}\n--- output ---\n${server.output() || '(none)'}`);
    // An early exit is most likely a lost race for the port: try another. No java, or no answer in time, is final.
    if (outcome !== 'exited' || server.spawnFailed) break;
  }
  throw new Error(
    `DynamoDB Local did not start in ${Math.round(performance.now() - startedAt)} ms (is ${JAVA_NEEDED} on the PATH?)\n${failures.join('\n')}`,
  );
}

/** A free TCP port of 127.0.0.1, from the operating system. */
function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const probe = createServer();
    probe.unref();
    probe.once('error', reject);
    probe.listen({ host: HOST, port: 0, exclusive: true }, () => {
      const address = probe.address();
      const port = typeof address === 'object' && address !== null ? address.port : 0;
      probe.close((error) => (error ? reject(error) : port > 0 ? resolve(port) : reject(new Error('no port assigned'))));
    });
  });
}

export class ServerProcess {
  readonly port: number;
  readonly #child: ChildProcess;
  readonly #killGraceMs: number;
  readonly #exited: Promise<void>;
  #output = '';
  #spawnError: Error | undefined;
  #stopping: Promise<void> | undefined;

  constructor(child: ChildProcess, port: number, killGraceMs: number) {
    this.#child = child;
    this.port = port;
    this.#killGraceMs = killGraceMs;
    // Drained always: a full pipe would stall java. The tail explains a failed start.
    const collect = (chunk: Buffer): void => {
      this.#output = (this.#output + chunk.toString('utf8')).slice(-OUTPUT_TAIL_CHARS);
    };
    child.stdout?.on('data', collect);
    child.stderr?.on('data', collect);
    this.#exited = new Promise((resolve) => {
      child.once('close', () => resolve());
      child.once('error', (error) => {
        this.#spawnError = error; // no java: 'close' may never come
        if (child.pid === undefined) resolve();
      });
    });
    killOnExit(child, this.#exited);
  }

  get endpoint(): string {
    return `http://${HOST}:${this.port}`;
  }

  get clientConfig(): DynamoDBClientConfig {
    return { endpoint: this.endpoint, region: 'us-east-1', credentials: { accessKeyId: 'local', secretAccessKey: 'local' } };
  }

  /** Polls ListTables until the server answers, exits, the deadline passes or `signal` aborts. */
  async waitUntilReady(deadline: number, signal: AbortSignal): Promise<'ready' | 'exited' | 'timeout' | 'aborted'> {
    let exited = false;
    void this.#exited.then(() => (exited = true));
    const client = new DynamoDBClient({ ...this.clientConfig, maxAttempts: 1 });
    try {
      while (!exited && !signal.aborted && performance.now() < deadline) {
        try {
          await listOneTable(client, AbortSignal.any([signal, AbortSignal.timeout(2_000)]));
          // The answer must come from our java, which dies right after losing the port to someone else.
          if (isRunning(this.#child)) return 'ready';
        } catch {
          // not listening yet
        }
        await sleep(Math.min(READY_POLL_MS, Math.max(0, deadline - performance.now())), undefined, { signal }).catch(() => {});
      }
      if (signal.aborted) return 'aborted';
      return exited || !isRunning(this.#child) ? 'exited' : 'timeout';
    } finally {
      client.destroy();
    }
  }

  get spawnFailed(): boolean {
    return this.#spawnError !== undefined;
  }

  describeFailure(outcome: 'exited' | 'timeout'): string {
    if (this.#spawnError !== undefined) return `could not run java: ${this.#spawnError.message}`;
    if (outcome === 'timeout') return 'no answer in time';
    return `exited early (code ${this.#child.exitCode}, signal ${this.#child.signalCode})`;
  }

  output(): string {
    return this.#output.trim();
  }

  /** Resolves once the process has exited. Safe to call twice. */
  stop(): Promise<void> {
    this.#stopping ??= this.#terminate();
    return this.#stopping;
  }

  async #terminate(): Promise<void> {
    if (!isRunning(this.#child)) return this.#exited;
    this.#child.kill('SIGTERM');
    const timer = setTimeout(() => {
      if (isRunning(this.#child)) this.#child.kill('SIGKILL');
    }, this.#killGraceMs);
    try {
      await this.#exited;
    } finally {
      clearTimeout(timer);
    }
  }
}
