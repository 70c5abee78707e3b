// Run by integration/package.test.ts in a CommonJS application with Jest.
import { LockClient } from 'dynamodb-lock';
import { startDynamoDBLocal } from 'dynamodb-lock/testing';

test('a lock on a private DynamoDB Local, under Jest', async () => {
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
}, 60_000);
