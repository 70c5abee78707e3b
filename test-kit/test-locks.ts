/**
 * What most integration tests share: one {@link LockTestBed} per test owns
 * every lock client, DynamoDB client and child process the test makes, and
 * `dispose()` ends them all (call it in `afterEach`).
 *
 * Every lock client gets its own DynamoDBClient with its own dummy
 * credentials, as separate processes would have.
 */
import type { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import type { ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { LockClient, type LockClientSettings } from '../src/index.js';
import { localCredentials, localEndpoint, newLocalClient, readItem, uniqueTableName, type Item } from './aws.js';
import { isRunning, reportedLines, spawnTsx } from './processes.js';

export const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

export const now = (): number => performance.now();

const utf8 = new TextDecoder();
export const text = (bytes: Uint8Array | undefined): string | undefined => (bytes === undefined ? undefined : utf8.decode(bytes));

/** Resolves with the rejection of `promise`; fails if it fulfils instead. */
export async function rejectionOf(promise: Promise<unknown>): Promise<unknown> {
  try {
    await promise;
  } catch (error) {
    return error;
  }
  throw new Error('expected the promise to reject, but it fulfilled');
}

/** Polls `probe` every `intervalMs` until it returns true; throws after `timeoutMs`. */
export async function waitUntil(
  what: string,
  probe: () => boolean | Promise<boolean>,
  { timeoutMs = 10_000, intervalMs = 25 }: { timeoutMs?: number; intervalMs?: number } = {},
): Promise<void> {
  const deadline = now() + timeoutMs;
  for (;;) {
    if (await probe()) return;
    if (now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting until ${what}`);
    await sleep(intervalMs);
  }
}

/** A promise whose settlement can be observed synchronously. */
export interface Watched<T> {
  readonly promise: Promise<T>;
  /** Monotonic time at which it settled, if it has. */
  settledAt(): number | undefined;
  settled(): boolean;
}

export function watch<T>(promise: Promise<T>): Watched<T> {
  let at: number | undefined;
  const mark = (): void => {
    at ??= now();
  };
  promise.then(mark, mark);
  // Keep an unobserved rejection from failing the run before the test awaits it.
  promise.catch(() => undefined);
  return { promise, settledAt: () => at, settled: () => at !== undefined };
}

/** One DynamoDB request a recording client passed on. */
export interface SentCommand {
  /** e.g. "PutItemCommand". */
  readonly name: string;
  readonly input: Record<string, unknown>;
}

/**
 * Wraps a DynamoDBClient: records every command, and lets a test hold a
 * command back (`hold`) before it is sent.
 */
export interface RecordingDynamoDB {
  readonly dynamoDB: Pick<DynamoDBClient, 'send'>;
  readonly sent: SentCommand[];
  /** Runs before a command is sent; its promise delays the send. */
  hold: ((command: SentCommand) => Promise<void> | void) | undefined;
  /** Commands by name, e.g. named('PutItemCommand'). */
  named(name: string): SentCommand[];
}

export function recording(inner: DynamoDBClient): RecordingDynamoDB {
  const recorder: RecordingDynamoDB = {
    sent: [],
    hold: undefined,
    named: (name) => recorder.sent.filter((command) => command.name === name),
    dynamoDB: {
      send: async (command: { input: Record<string, unknown> }, options?: unknown) => {
        const sent: SentCommand = { name: command.constructor.name, input: command.input };
        recorder.sent.push(sent);
        await recorder.hold?.(sent);
        return (inner.send as (c: unknown, o?: unknown) => Promise<unknown>)(command, options);
      },
    },
  };
  return recorder;
}

/**
 * The requests on lock items a recorder saw: all but the DescribeTable with
 * which a client checks its table once, before its first acquisition.
 */
export function lockRequests(recorder: RecordingDynamoDB): SentCommand[] {
  return recorder.sent.filter((command) => command.name !== 'DescribeTableCommand');
}

/**
 * Makes a recorder answer every BatchExecuteStatement call the way DynamoDB
 * does without the PartiQL `permission` (DynamoDB Local has no IAM).
 */
export function refuseStatementBatches(recorder: RecordingDynamoDB, permission: 'PartiQLUpdate' | 'PartiQLInsert'): void {
  recorder.hold = (command) => {
    if (command.name !== 'BatchExecuteStatementCommand') return;
    throw Object.assign(new Error(`not authorized to perform: dynamodb:${permission}`), {
      name: 'AccessDeniedException',
      $metadata: { httpStatusCode: 400, attempts: 1 },
    });
  };
}

/** One JSON line a child process printed. */
export interface ReportedEvent {
  readonly event: string;
  readonly rvn?: string;
  readonly pid?: number;
  readonly [field: string]: unknown;
}

/** A lock holder in a child process (test-kit/programs/holder-process.ts, or another program that reports JSON lines). */
export interface HolderProcess {
  readonly child: ChildProcess;
  /** Every JSON line it printed, in order. */
  readonly events: ReportedEvent[];
  /** Resolves with the first event named `event` (at or after index `from`). */
  next(event: string, from?: number, timeoutMs?: number): Promise<ReportedEvent>;
  /** SIGKILLs it and resolves once it has exited. */
  kill(): Promise<NodeJS.Signals | null>;
  stderr(): string;
}

const HOLDER_SCRIPT = fileURLToPath(new URL('./programs/holder-process.ts', import.meta.url));

export interface ClientOptions extends Omit<LockClientSettings, 'tableName'> {
  /** Required here so that every client of a test has a distinct, known identity. */
  readonly ownerName: string;
}

export class LockTestBed {
  readonly tableName: string;
  readonly #lockClients: LockClient[] = [];
  readonly #dynamoDBClients: DynamoDBClient[] = [];
  readonly #children: ChildProcess[] = [];
  /** For raw reads and writes that bypass the lock client. */
  readonly raw: DynamoDBClient;
  readonly partitionKeyName: string;
  readonly sortKeyName: string | undefined;

  constructor(prefix: string, keys: { partitionKeyName?: string; sortKeyName?: string } = {}) {
    this.tableName = uniqueTableName(prefix);
    this.partitionKeyName = keys.partitionKeyName ?? 'key';
    this.sortKeyName = keys.sortKeyName;
    this.raw = this.dynamoDBClient('raw-reader');
  }

  /** A DynamoDBClient with its own dummy credentials; destroyed by {@link dispose}. */
  dynamoDBClient(identity: string): DynamoDBClient {
    const client = newLocalClient({ credentials: localCredentials(identity) });
    this.#dynamoDBClients.push(client);
    return client;
  }

  /** A lock client on this table with its own DynamoDB client (or `dynamoDB` if given); closed by {@link dispose}. */
  client(options: ClientOptions, dynamoDB?: Pick<DynamoDBClient, 'send'>): LockClient {
    const client = new LockClient({
      partitionKeyName: this.partitionKeyName,
      ...(this.sortKeyName === undefined ? {} : { sortKeyName: this.sortKeyName }),
      ...options,
      tableName: this.tableName,
      dynamoDB: dynamoDB ?? this.dynamoDBClient(options.ownerName),
    });
    this.#lockClients.push(client);
    return client;
  }

  /** Creates the table through a throwaway lock client (`createLockTable`). */
  async createTable(): Promise<void> {
    const creator = this.client({ ownerName: 'table-creator' });
    await creator.createLockTable();
  }

  key(partitionKey: string, sortKey?: string): Item {
    const key: Item = { [this.partitionKeyName]: { S: partitionKey } };
    if (this.sortKeyName !== undefined && sortKey !== undefined) key[this.sortKeyName] = { S: sortKey };
    return key;
  }

  /** The item as stored, read consistently; undefined when there is none. */
  async item(partitionKey: string, sortKey?: string): Promise<Item | undefined> {
    return readItem(this.raw, this.tableName, this.key(partitionKey, sortKey));
  }

  /** The stored RVN (undefined when there is no item). */
  async rvn(partitionKey: string, sortKey?: string): Promise<string | undefined> {
    return (await this.item(partitionKey, sortKey))?.['recordVersionNumber']?.S;
  }

  async owner(partitionKey: string, sortKey?: string): Promise<string | undefined> {
    return (await this.item(partitionKey, sortKey))?.['ownerName']?.S;
  }

  /** Starts test-kit/programs/holder-process.ts, which acquires `key` and heartbeats it. */
  spawnHolder(key: string, ownerName: string, leaseMs: number, heartbeatMs: number): HolderProcess {
    return this.spawnReporter(HOLDER_SCRIPT, [this.tableName, key, ownerName, String(leaseMs), String(heartbeatMs)]);
  }

  /**
   * Starts `script` (under tsx) with DynamoDB Local's endpoint and then
   * `args` as its arguments; it reports on stdout as JSON lines. Killed by
   * {@link dispose}.
   */
  spawnReporter(script: string, args: readonly string[]): HolderProcess {
    const child = spawnTsx(script, [localEndpoint(), ...args]);
    this.#children.push(child);
    const reported = reportedLines<ReportedEvent>(child);
    const exited = new Promise<NodeJS.Signals | null>((resolve) => {
      if (child.exitCode !== null || child.signalCode !== null) resolve(child.signalCode);
      else child.once('exit', (_code, signal) => resolve(signal));
    });

    return {
      child,
      events: reported.lines,
      stderr: reported.stderr,
      next: (event, from = 0, timeoutMs = 20_000) => reported.next((e, i) => i >= from && e.event === event, `"${event}"`, timeoutMs),
      kill: async () => {
        if (isRunning(child)) child.kill('SIGKILL');
        return exited;
      },
    };
  }

  /** Closes every lock client, destroys every DynamoDB client, kills every child. Never throws. */
  async dispose(): Promise<void> {
    for (const child of this.#children) {
      if (isRunning(child)) child.kill('SIGKILL');
    }
    await Promise.allSettled(this.#lockClients.map((client) => client.close()));
    for (const client of this.#dynamoDBClients) client.destroy();
  }
}
