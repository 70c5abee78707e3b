import { afterAll, describe, expect, it } from '@jest/globals';
import {
  CreateTableCommand,
  DeleteTableCommand,
  DescribeTableCommand,
  ListTablesCommand,
  ResourceNotFoundException,
  waitUntilTableExists,
} from '@aws-sdk/client-dynamodb';
import { localEndpoint, newLocalClient, uniqueTableName } from '../test-kit/aws.js';

describe('DynamoDB Local (jest globalSetup)', () => {
  const alice = newLocalClient({
    region: 'us-east-1',
    credentials: { accessKeyId: 'alice', secretAccessKey: 'alice-secret' },
  });
  const bob = newLocalClient({
    region: 'eu-west-1',
    credentials: { accessKeyId: 'bob', secretAccessKey: 'bob-secret' },
  });

  afterAll(() => {
    alice.destroy();
    bob.destroy();
  });

  it('publishes a 127.0.0.1 endpoint and answers ListTables', async () => {
    expect(localEndpoint()).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
    const out = await alice.send(new ListTablesCommand({}));
    expect(Array.isArray(out.TableNames)).toBe(true);
  });

  it('shares one database across credentials and regions (-sharedDb)', async () => {
    const TableName = uniqueTableName('shared-db');
    await alice.send(
      new CreateTableCommand({
        TableName,
        AttributeDefinitions: [{ AttributeName: 'pk', AttributeType: 'S' }],
        KeySchema: [{ AttributeName: 'pk', KeyType: 'HASH' }],
        BillingMode: 'PAY_PER_REQUEST',
      }),
    );
    try {
      await waitUntilTableExists({ client: alice, maxWaitTime: 30 }, { TableName });

      const seenByBob = await bob.send(new DescribeTableCommand({ TableName }));
      expect(seenByBob.Table?.TableName).toBe(TableName);
      expect(seenByBob.Table?.KeySchema).toEqual([{ AttributeName: 'pk', KeyType: 'HASH' }]);
    } finally {
      await bob.send(new DeleteTableCommand({ TableName }));
    }

    await expect(alice.send(new DescribeTableCommand({ TableName }))).rejects.toBeInstanceOf(ResourceNotFoundException);
  });
});
