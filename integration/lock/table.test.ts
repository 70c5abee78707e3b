/**
 * createLockTable / lockTableExists / assertLockTableExists against DynamoDB
 * Local: billing modes, key schemas, waiting for ACTIVE, `ifNotExists`, and
 * the typed errors for bad options and mismatching tables.
 */
import { afterEach, describe, expect, test } from '@jest/globals';
import { CreateTableCommand, DescribeTableCommand, type DynamoDBClient, type TableDescription } from '@aws-sdk/client-dynamodb';
import {
  DynamoDBLockError,
  InvalidArgumentError,
  LockClient,
  LockTableAlreadyExistsError,
  LockTableDoesNotExistError,
  LockTableSchemaMismatchError,
  type CreateLockTableOptions,
  type InvalidArgumentCode,
  type LockClientSettings,
} from '../../src/index.js';
import { newLocalClient, uniqueTableName } from '../../test-kit/aws.js';
import { dynamoDBErrorReply, operationOf } from '../../test-kit/fault-proxy.js';
import { proxiedDynamoDB } from '../../test-kit/proxied-dynamodb.js';
import { recording, rejectionOf, type RecordingDynamoDB } from '../../test-kit/test-locks.js';

type Sender = Pick<DynamoDBClient, 'send'>;

const opened: { clients: LockClient[]; dynamoDB: DynamoDBClient[] } = { clients: [], dynamoDB: [] };

afterEach(async () => {
  await Promise.allSettled(opened.clients.map((client) => client.close()));
  for (const client of opened.dynamoDB) client.destroy();
  opened.clients = [];
  opened.dynamoDB = [];
});

function dynamoDBClient(): DynamoDBClient {
  const client = newLocalClient();
  opened.dynamoDB.push(client);
  return client;
}

/** A lock client on its own DynamoDB client, recording every request. */
function lockClient(
  settings: Partial<LockClientSettings> & { tableName: string },
  dynamoDB?: Sender,
): { client: LockClient; recorder: RecordingDynamoDB | undefined } {
  const recorder = dynamoDB === undefined ? recording(dynamoDBClient()) : undefined;
  const client = new LockClient({
    ownerName: 'lock-table-test',
    leaseDuration: 2_000,
    heartbeatPeriod: 500,
    ...settings,
    dynamoDB: dynamoDB ?? (recorder as RecordingDynamoDB).dynamoDB,
  });
  opened.clients.push(client);
  return { client, recorder };
}

async function describeTable(tableName: string): Promise<TableDescription> {
  const output = await dynamoDBClient().send(new DescribeTableCommand({ TableName: tableName }));
  if (output.Table === undefined) throw new Error(`DescribeTable ${tableName} returned no table`);
  return output.Table;
}

const keySchemaOf = (table: TableDescription) => ({
  keySchema: table.KeySchema?.map(({ AttributeName, KeyType }) => ({ AttributeName, KeyType })),
  attributeDefinitions: [...(table.AttributeDefinitions ?? [])]
    .map(({ AttributeName, AttributeType }) => ({ AttributeName, AttributeType }))
    .sort((a, b) => String(a.AttributeName).localeCompare(String(b.AttributeName))),
});

/** Wraps a client so that the first `count` DescribeTable answers say CREATING. */
function creatingFor(count: number, inner: DynamoDBClient): { dynamoDB: Sender; describes: () => number } {
  let describes = 0;
  const send = async (command: object, options?: unknown): Promise<unknown> => {
    const output = await (inner.send as (c: unknown, o?: unknown) => Promise<unknown>)(command, options);
    if (command instanceof DescribeTableCommand) {
      describes++;
      const table = (output as { Table?: TableDescription }).Table;
      if (describes <= count && table !== undefined) return { ...(output as object), Table: { ...table, TableStatus: 'CREATING' } };
    }
    return output;
  };
  return { dynamoDB: { send }, describes: () => describes };
}

describe('createLockTable', () => {
  test('is on-demand by default, waits until ACTIVE, and the table is ready for locks', async () => {
    const tableName = uniqueTableName('lt-default');
    const { client, recorder } = lockClient({ tableName });
    expect(await client.lockTableExists()).toBe(false);

    await client.createLockTable();

    const creates = recorder?.named('CreateTableCommand') ?? [];
    expect(creates).toHaveLength(1);
    expect(creates[0]?.input).toEqual({
      TableName: tableName,
      KeySchema: [{ AttributeName: 'key', KeyType: 'HASH' }],
      AttributeDefinitions: [{ AttributeName: 'key', AttributeType: 'S' }],
      BillingMode: 'PAY_PER_REQUEST',
    });
    const table = await describeTable(tableName);
    expect(table.TableStatus).toBe('ACTIVE');
    expect(table.BillingModeSummary?.BillingMode).toBe('PAY_PER_REQUEST');
    expect(keySchemaOf(table)).toEqual({
      keySchema: [{ AttributeName: 'key', KeyType: 'HASH' }],
      attributeDefinitions: [{ AttributeName: 'key', AttributeType: 'S' }],
    });
    expect(await client.lockTableExists()).toBe(true);
    await expect(client.assertLockTableExists()).resolves.toBeUndefined();

    const lock = await client.acquireLock('first', { additionalTimeToWaitForLock: 0 });
    expect(await lock.release()).toBe(true);
  });

  test('is provisioned on request, with the given throughput', async () => {
    const tableName = uniqueTableName('lt-provisioned');
    const { client, recorder } = lockClient({ tableName });

    await client.createLockTable({ billingMode: 'PROVISIONED', provisionedThroughput: { readCapacityUnits: 3, writeCapacityUnits: 4 } });

    expect(recorder?.named('CreateTableCommand')[0]?.input).toEqual({
      TableName: tableName,
      KeySchema: [{ AttributeName: 'key', KeyType: 'HASH' }],
      AttributeDefinitions: [{ AttributeName: 'key', AttributeType: 'S' }],
      ProvisionedThroughput: { ReadCapacityUnits: 3, WriteCapacityUnits: 4 },
    });
    const table = await describeTable(tableName);
    expect(table.TableStatus).toBe('ACTIVE');
    expect(table.ProvisionedThroughput).toMatchObject({ ReadCapacityUnits: 3, WriteCapacityUnits: 4 });
    expect(table.BillingModeSummary?.BillingMode ?? 'PROVISIONED').toBe('PROVISIONED');
    expect(await client.lockTableExists()).toBe(true);
  });

  test.each([
    { keys: 'partition key "key" and sort key "sortKey"', partitionKeyName: undefined, sortKeyName: 'sortKey' },
    { keys: 'partition key "lockName" and sort key "shard"', partitionKeyName: 'lockName', sortKeyName: 'shard' },
    { keys: 'partition key "lockName" only', partitionKeyName: 'lockName', sortKeyName: undefined },
  ])('creates the key schema of the client: $keys', async ({ partitionKeyName, sortKeyName }) => {
    const tableName = uniqueTableName('lt-keys');
    const { client } = lockClient({ tableName, partitionKeyName, sortKeyName });

    await client.createLockTable();

    const pk = partitionKeyName ?? 'key';
    const expected = {
      keySchema: [{ AttributeName: pk, KeyType: 'HASH' }],
      attributeDefinitions: [{ AttributeName: pk, AttributeType: 'S' }],
    };
    if (sortKeyName !== undefined) {
      expected.keySchema.push({ AttributeName: sortKeyName, KeyType: 'RANGE' });
      expected.attributeDefinitions.push({ AttributeName: sortKeyName, AttributeType: 'S' });
      expected.attributeDefinitions.sort((a, b) => a.AttributeName.localeCompare(b.AttributeName));
    }
    const table = await describeTable(tableName);
    expect(keySchemaOf(table)).toEqual(expected);
    expect(await client.lockTableExists()).toBe(true);
    await expect(client.assertLockTableExists()).resolves.toBeUndefined();
    const lock = await client.acquireLock('k', { sortKey: sortKeyName === undefined ? undefined : 's', additionalTimeToWaitForLock: 0 });
    expect(await lock.release()).toBe(true);
  });

  test('waits while DescribeTable reports CREATING and resolves once it reports ACTIVE', async () => {
    const tableName = uniqueTableName('lt-wait');
    const fake = creatingFor(3, dynamoDBClient());
    const { client } = lockClient({ tableName }, fake.dynamoDB);

    const started = performance.now();
    await client.createLockTable();

    // Three CREATING answers, then ACTIVE: four descriptions, three polls in between.
    expect(fake.describes()).toBe(4);
    expect(performance.now() - started).toBeGreaterThanOrEqual(3 * 200);
    const { client: observer } = lockClient({ tableName });
    expect(await observer.lockTableExists()).toBe(true);
  });

  test('gives up with LockTableDoesNotExistError when the table stays CREATING past activeTimeout', async () => {
    const tableName = uniqueTableName('lt-timeout');
    const fake = creatingFor(Number.MAX_SAFE_INTEGER, dynamoDBClient());
    const { client } = lockClient({ tableName }, fake.dynamoDB);

    const started = performance.now();
    const error = await rejectionOf(client.createLockTable({ activeTimeout: 600 }));
    expect(error).toBeInstanceOf(LockTableDoesNotExistError);
    expect((error as LockTableDoesNotExistError).tableName).toBe(tableName);
    expect(performance.now() - started).toBeGreaterThanOrEqual(600);
    expect(performance.now() - started).toBeLessThan(5_000);
    // lockTableExists of the same (faked) client agrees: CREATING is not usable.
    expect(await client.lockTableExists()).toBe(false);
  });

  test('ifNotExists: an existing table with the right keys is accepted as it is', async () => {
    const tableName = uniqueTableName('lt-exists');
    const { client } = lockClient({ tableName, sortKeyName: 'sortKey' });
    await client.createLockTable({ billingMode: 'PROVISIONED', provisionedThroughput: { readCapacityUnits: 5, writeCapacityUnits: 5 } });
    const before = await describeTable(tableName);

    const { client: second, recorder } = lockClient({ tableName, sortKeyName: 'sortKey' });
    await expect(second.createLockTable({ ifNotExists: true })).resolves.toBeUndefined();

    // It looked before creating: DescribeTable found the table, and no CreateTable was sent.
    expect(recorder?.sent.map((command) => command.name)).toEqual(['DescribeTableCommand']);
    const after = await describeTable(tableName);
    // Nothing changed: still the first creation, still provisioned.
    expect(after.CreationDateTime).toEqual(before.CreationDateTime);
    expect(after.ProvisionedThroughput).toMatchObject({ ReadCapacityUnits: 5, WriteCapacityUnits: 5 });
    expect(await second.lockTableExists()).toBe(true);
  });

  test('ifNotExists: a role without dynamodb:CreateTable succeeds when the table exists', async () => {
    const tableName = uniqueTableName('lt-no-create');
    await lockClient({ tableName }).client.createLockTable();
    const network = await proxiedDynamoDB('runtime-role', { sdkDefaults: true });
    try {
      // The least-privilege runtime policy: DynamoDB refuses CreateTable, as IAM would.
      network.proxy.setRule((request) =>
        operationOf(request) === 'CreateTable'
          ? { action: 'respond', reply: dynamoDBErrorReply('AccessDeniedException') }
          : { action: 'forward' },
      );
      const { client } = lockClient({ tableName }, network.dynamoDB);

      await expect(client.createLockTable({ ifNotExists: true })).resolves.toBeUndefined();
      expect(network.proxy.exchanges.map((exchange) => operationOf(exchange.request))).toEqual(['DescribeTable']);
      // Without ifNotExists the table is still created by CreateTable, which this role may not send.
      const error = await rejectionOf(client.createLockTable());
      expect((error as Error).name).toBe('AccessDeniedException');
    } finally {
      await network.dispose();
    }
  });

  test('ifNotExists on a missing table creates it after one DescribeTable', async () => {
    const tableName = uniqueTableName('lt-if-missing');
    const { client, recorder } = lockClient({ tableName });

    await client.createLockTable({ ifNotExists: true });

    const names = recorder?.sent.map((command) => command.name) ?? [];
    expect(names.slice(0, 2)).toEqual(['DescribeTableCommand', 'CreateTableCommand']);
    expect(names.slice(2).every((name) => name === 'DescribeTableCommand')).toBe(true);
    expect((await describeTable(tableName)).TableStatus).toBe('ACTIVE');
  });

  test('without ifNotExists a second create rejects with LockTableAlreadyExistsError, DynamoDB’s exception as its cause', async () => {
    const tableName = uniqueTableName('lt-twice');
    const { client } = lockClient({ tableName });
    await client.createLockTable();

    const error = await rejectionOf(client.createLockTable());
    expect(error).toBeInstanceOf(LockTableAlreadyExistsError);
    expect(error).toBeInstanceOf(DynamoDBLockError);
    expect(error).toMatchObject({ name: 'LockTableAlreadyExistsError', tableName });
    expect((error as Error).message).toBe(`Lock table ${JSON.stringify(tableName)} already exists`);
    expect(((error as Error).cause as Error).name).toBe('ResourceInUseException');
    expect(await client.lockTableExists()).toBe(true);
  });

  test.each([
    {
      what: 'another partitionKeyName',
      existing: {},
      client: { partitionKeyName: 'lockName' },
      message: 'The client\'s partitionKeyName "lockName" does not match lock table',
    },
    {
      what: 'a sortKeyName on a hash-only table',
      existing: {},
      client: { sortKeyName: 'sortKey' },
      message: 'The client\'s sortKeyName "sortKey" does not match lock table',
    },
    {
      what: 'no sortKeyName on a sort-key table',
      existing: { sortKeyName: 'sortKey' },
      client: {},
      message: 'The client has no sortKeyName, but lock table',
    },
    {
      what: 'another sortKeyName',
      existing: { sortKeyName: 'sortKey' },
      client: { sortKeyName: 'shard' },
      message: 'The client\'s sortKeyName "shard" does not match lock table',
    },
  ])('ifNotExists on a table with mismatching keys ($what) → LockTableSchemaMismatchError', async ({ existing, client: settings, message }) => {
    const tableName = uniqueTableName('lt-mismatch');
    await lockClient({ tableName, ...existing }).client.createLockTable();
    const { client } = lockClient({ tableName, ...settings });

    const error = await rejectionOf(client.createLockTable({ ifNotExists: true }));
    expect(error).toBeInstanceOf(LockTableSchemaMismatchError);
    expect((error as Error).message).toContain(message);
    expect((error as LockTableSchemaMismatchError).tableName).toBe(tableName);
    // assertLockTableExists says the same.
    await expect(client.assertLockTableExists()).rejects.toBeInstanceOf(LockTableSchemaMismatchError);
  });

  test('a table whose key has the right name but type N is a mismatch too', async () => {
    const tableName = uniqueTableName('lt-numeric');
    await dynamoDBClient().send(
      new CreateTableCommand({
        TableName: tableName,
        KeySchema: [{ AttributeName: 'key', KeyType: 'HASH' }],
        AttributeDefinitions: [{ AttributeName: 'key', AttributeType: 'N' }],
        BillingMode: 'PAY_PER_REQUEST',
      }),
    );
    const { client } = lockClient({ tableName });

    const created = await rejectionOf(client.createLockTable({ ifNotExists: true }));
    expect(created).toBeInstanceOf(LockTableSchemaMismatchError);
    expect((created as Error).message).toContain('(partition key "key") with non-string key types');
    await expect(client.assertLockTableExists()).rejects.toBeInstanceOf(LockTableSchemaMismatchError);
    // The acquire path diagnoses DynamoDB's ValidationException the same way.
    await expect(client.acquireLock('k', { additionalTimeToWaitForLock: 0 })).rejects.toBeInstanceOf(LockTableSchemaMismatchError);
  });

  test.each<{ what: string; options: CreateLockTableOptions; code: InvalidArgumentCode; message: string }>([
    {
      what: 'PROVISIONED without provisionedThroughput',
      options: { billingMode: 'PROVISIONED' },
      code: 'INVALID_OPTION',
      message: 'billingMode "PROVISIONED" needs provisionedThroughput',
    },
    {
      what: 'PROVISIONED with 0 read units',
      options: { billingMode: 'PROVISIONED', provisionedThroughput: { readCapacityUnits: 0, writeCapacityUnits: 1 } },
      code: 'INVALID_OPTION',
      message: 'whole readCapacityUnits and writeCapacityUnits ≥ 1',
    },
    {
      what: 'PROVISIONED with fractional write units',
      options: { billingMode: 'PROVISIONED', provisionedThroughput: { readCapacityUnits: 1, writeCapacityUnits: 1.5 } },
      code: 'INVALID_OPTION',
      message: 'whole readCapacityUnits and writeCapacityUnits ≥ 1',
    },
    {
      what: 'provisionedThroughput with on-demand billing',
      options: { provisionedThroughput: { readCapacityUnits: 1, writeCapacityUnits: 1 } },
      code: 'CONFLICTING_OPTIONS',
      message: 'provisionedThroughput needs billingMode "PROVISIONED"',
    },
  ])('$what → InvalidArgumentError before any request', async ({ options, code, message }) => {
    const tableName = uniqueTableName('lt-bad-options');
    const { client, recorder } = lockClient({ tableName });

    const error = await rejectionOf(client.createLockTable(options));
    expect(error).toBeInstanceOf(InvalidArgumentError);
    expect((error as InvalidArgumentError).code).toBe(code);
    expect((error as Error).message).toContain(message);
    expect(recorder?.sent).toEqual([]);
    expect(await client.lockTableExists()).toBe(false);
  });
});

describe('lockTableExists / assertLockTableExists', () => {
  test('a missing table: false, and LockTableDoesNotExistError', async () => {
    const tableName = uniqueTableName('lt-missing');
    const { client } = lockClient({ tableName });
    expect(await client.lockTableExists()).toBe(false);
    const error = await rejectionOf(client.assertLockTableExists());
    expect(error).toBeInstanceOf(LockTableDoesNotExistError);
    expect((error as Error).message).toBe(`Lock table ${JSON.stringify(tableName)} does not exist or is not active`);
  });

  test('assertLockTableExists passes on good tables, hash-only and with a sort key', async () => {
    const hash = uniqueTableName('lt-good-hash');
    const sort = uniqueTableName('lt-good-sort');
    await lockClient({ tableName: hash }).client.createLockTable();
    await lockClient({ tableName: sort, partitionKeyName: 'name', sortKeyName: 'part' }).client.createLockTable();

    // Fresh clients, as another process would have them.
    const hashClient = lockClient({ tableName: hash }).client;
    const sortClient = lockClient({ tableName: sort, partitionKeyName: 'name', sortKeyName: 'part' }).client;
    await expect(hashClient.assertLockTableExists()).resolves.toBeUndefined();
    await expect(sortClient.assertLockTableExists()).resolves.toBeUndefined();
    expect(await hashClient.lockTableExists()).toBe(true);
    expect(await sortClient.lockTableExists()).toBe(true);
  });

  test('a table that is still CREATING does not count as existing', async () => {
    const tableName = uniqueTableName('lt-creating');
    await lockClient({ tableName }).client.createLockTable();
    const fake = creatingFor(Number.MAX_SAFE_INTEGER, dynamoDBClient());
    const { client } = lockClient({ tableName }, fake.dynamoDB);
    expect(await client.lockTableExists()).toBe(false);
    await expect(client.assertLockTableExists()).rejects.toBeInstanceOf(LockTableDoesNotExistError);
  });
});

describe('listing checks the key schema first', () => {
  test('a Scan or Query through the wrong key names fails LockTableSchemaMismatchError instead of mis-decoding', async () => {
    const tableName = uniqueTableName('listing-schema');
    const { client: sortKeyed } = lockClient({ tableName, sortKeyName: 'sortKey' });
    await sortKeyed.createLockTable();
    const lock = await sortKeyed.acquireLock('job', { sortKey: 'part-1' });

    const { client: hashOnly } = lockClient({ tableName, ownerName: 'hash-only' });
    const listAll = async () => {
      for await (const snapshot of hashOnly.getAllLocks()) void snapshot;
    };
    const listByKey = async () => {
      for await (const snapshot of hashOnly.getLocksByPartitionKey('job')) void snapshot;
    };
    expect(await rejectionOf(listAll())).toBeInstanceOf(LockTableSchemaMismatchError);
    expect(await rejectionOf(listByKey())).toBeInstanceOf(LockTableSchemaMismatchError);

    const listed = [];
    for await (const snapshot of sortKeyed.getAllLocks()) listed.push(snapshot);
    expect(listed.map((s) => [s.partitionKey, s.sortKey, s.additionalAttributes])).toEqual([['job', 'part-1', {}]]);
    expect(await lock.release()).toBe(true);
  });
});
