// Run by integration/package.test.ts in an application with Vitest, as is.
import { expect, test } from 'vitest';
import { LockClient } from 'dynamodb-lock';
import { startDynamoDBLocal } from 'dynamodb-lock/testing';

test('a lock on a private DynamoDB Local, under Vitest', { timeout: 60_000 }, async () => {
  const ddb = await startDynamoDBLocal({ tableName: 'locks' });
  try {
    const locks = new LockClient({ dynamoDBConfig: ddb.clientConfig, tableName: ddb.tableName });
    const lock = await locks.acquireLock('job');
    expect(lock.state).toBe('held');
    await locks.close();
    expect(lock.state).toBe('released');
  } finally {
    await ddb.stop();
  }
});
