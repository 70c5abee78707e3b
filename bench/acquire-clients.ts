/**
 * The two lock libraries behind one small interface, so that every acquire
 * benchmark drives both the same way: same DynamoDB Local, same SDK client
 * settings, same lease and heartbeat period, calls counted by the same
 * middleware (test-kit/call-counter.ts).
 */
import { CreateTableCommand, DynamoDBClient, ResourceInUseException } from '@aws-sdk/client-dynamodb';
import { LockClient } from '../src/index.js';
import { countCalls, type CallCounter } from '../test-kit/call-counter.js';
import { FailOpen, v2StyleDocumentClient, type FailOpenLock } from './acquire-ddb-lock-client.js';

export const CLIENTS = ['dynamodb-lock', 'dynamodb-lock-client'] as const;
export type ClientName = (typeof CLIENTS)[number];

export interface LockSettings {
  readonly leaseMs: number;
  readonly heartbeatMs: number;
  /** dynamodb-lock's refreshPeriod; dynamodb-lock-client has none (it re-reads one lease after each read). */
  readonly pollMs: number;
  /** dynamodb-lock's turnLength with turns on (`undefined`: one `pollMs`); dynamodb-lock-client has no turns. */
  readonly turnMs?: number | undefined;
  /** dynamodb-lock with turns on (`turnLength` set); without, its default: no turns. */
  readonly turnsOn?: boolean;
}

/** One column of a side-by-side run: a library, and for dynamodb-lock whether its turns are on. */
export interface BenchVariant {
  readonly label: string;
  readonly client: ClientName;
  readonly turnsOn: boolean;
}

/** dynamodb-lock as users run it, the same with turns on (what the turns cost or gain), and dynamodb-lock-client. */
export const VARIANTS: readonly BenchVariant[] = [
  { label: 'dynamodb-lock', client: 'dynamodb-lock', turnsOn: false },
  { label: 'dynamodb-lock with turns', client: 'dynamodb-lock', turnsOn: true },
  { label: 'dynamodb-lock-client', client: 'dynamodb-lock-client', turnsOn: false },
];

/** How often a waiter of this client looks at a held lock. */
export const pollPeriodOf = (client: ClientName, settings: LockSettings): number =>
  client === 'dynamodb-lock' ? settings.pollMs : settings.leaseMs;

/** What a benchmark child process needs to open its client and name its lock. */
export interface ClientProcessConfig {
  readonly client: ClientName;
  readonly endpoint: string;
  readonly key: string;
  /** Owner name. */
  readonly name: string;
  readonly settings: LockSettings;
}

export interface HeldBenchLock {
  release(): Promise<void>;
}

export interface BenchLockClient {
  readonly name: ClientName;
  readonly calls: CallCounter;
  /** Waits for the lock as long as it takes, or until `signal` aborts. */
  acquire(key: string, signal?: AbortSignal): Promise<HeldBenchLock>;
  close(): Promise<void>;
}

/** Each library keeps its own table with its own key name. */
export const tableOf = (client: ClientName): { tableName: string; partitionKey: string } =>
  client === 'dynamodb-lock'
    ? { tableName: 'bench-dynamodb-lock', partitionKey: 'key' }
    : { tableName: 'bench-dynamodb-lock-client', partitionKey: 'id' };

export function benchDynamoDB(endpoint: string): DynamoDBClient {
  return new DynamoDBClient({
    endpoint,
    region: 'us-east-1',
    credentials: { accessKeyId: 'bench', secretAccessKey: 'bench' },
    requestHandler: { connectionTimeout: 5_000, requestTimeout: 30_000 },
  });
}

export async function createTables(endpoint: string): Promise<void> {
  const dynamoDB = benchDynamoDB(endpoint);
  try {
    for (const client of CLIENTS) {
      const { tableName, partitionKey } = tableOf(client);
      try {
        await dynamoDB.send(
          new CreateTableCommand({
            TableName: tableName,
            AttributeDefinitions: [{ AttributeName: partitionKey, AttributeType: 'S' }],
            KeySchema: [{ AttributeName: partitionKey, KeyType: 'HASH' }],
            BillingMode: 'PAY_PER_REQUEST',
          }),
        );
      } catch (error) {
        if (!(error instanceof ResourceInUseException)) throw error;
      }
    }
  } finally {
    dynamoDB.destroy();
  }
}

export function openClient(name: ClientName, endpoint: string, settings: LockSettings, ownerName: string): BenchLockClient {
  if (name === 'dynamodb-lock') return ours(ourLockClient(endpoint, settings, ownerName), settings);
  const dynamoDB = benchDynamoDB(endpoint);
  return theirs(dynamoDB, countCalls(dynamoDB), settings, ownerName);
}

/** A `LockClient` of the bench's lock table with the bench's settings, on a DynamoDB client of its own whose calls are counted. */
export function ourLockClient(
  endpoint: string,
  settings: LockSettings,
  ownerName: string,
): { readonly dynamoDB: DynamoDBClient; readonly calls: CallCounter; readonly client: LockClient } {
  const dynamoDB = benchDynamoDB(endpoint);
  const client = new LockClient({
    dynamoDB,
    tableName: tableOf('dynamodb-lock').tableName,
    ownerName,
    leaseDuration: settings.leaseMs,
    heartbeatPeriod: settings.heartbeatMs,
  });
  return { dynamoDB, calls: countCalls(dynamoDB), client };
}

function ours({ dynamoDB, calls, client }: ReturnType<typeof ourLockClient>, settings: LockSettings): BenchLockClient {
  return {
    name: 'dynamodb-lock',
    calls,
    acquire: async (key, signal) => {
      const lock = await client.acquireLock(key, {
        refreshPeriod: settings.pollMs,
        turnLength: settings.turnsOn === true ? (settings.turnMs ?? settings.pollMs) : undefined,
        additionalTimeToWaitForLock: Infinity,
        signal,
      });
      return { release: async () => void (await lock.release()) };
    },
    close: async () => {
      await client.close();
      dynamoDB.destroy();
    },
  };
}

function theirs(dynamoDB: DynamoDBClient, calls: CallCounter, settings: LockSettings, ownerName: string): BenchLockClient {
  const client = new FailOpen({
    dynamodb: v2StyleDocumentClient(dynamoDB),
    lockTable: tableOf('dynamodb-lock-client').tableName,
    partitionKey: tableOf('dynamodb-lock-client').partitionKey,
    leaseDurationMs: settings.leaseMs,
    heartbeatPeriodMs: settings.heartbeatMs,
    // It gives up after this many refused attempts; the benchmarks want it to wait as ours does.
    retryCount: 1_000_000,
    owner: ownerName,
  });
  const attempt = (key: string): Promise<FailOpenLock> =>
    new Promise((resolve, reject) => client.acquireLock(key, (error, lock) => (lock === undefined ? reject(error) : resolve(lock))));
  return {
    name: 'dynamodb-lock-client',
    calls,
    acquire: async (key, signal) => {
      signal?.throwIfAborted();
      // It cannot be cancelled: a wait cut off by the signal goes on in the background and is ignored.
      const acquiring = attempt(key);
      acquiring.catch(() => undefined); // a late failure after the signal aborted is nobody's business
      const lock = await (signal === undefined
        ? acquiring
        : Promise.race([
            acquiring,
            new Promise<never>((_, reject) => signal.addEventListener('abort', () => reject(signal.reason), { once: true })),
          ]));
      // Without a listener an 'error' event (a failed heartbeat) would crash the process.
      lock.on('error', () => undefined);
      return {
        release: () => new Promise<void>((resolve, reject) => lock.release((error) => (error ? reject(error) : resolve()))),
      };
    },
    close: async () => {
      dynamoDB.destroy();
    },
  };
}
