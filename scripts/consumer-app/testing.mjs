// dynamodb-lock/testing from the packed package: a private DynamoDB Local
// with a lock table, a lock on it, then the server stopped.
import { LockClient } from 'dynamodb-lock';
import { startDynamoDBLocal } from 'dynamodb-lock/testing';

const ddb = await startDynamoDBLocal({ tableName: 'locks' });
try {
  const locks = new LockClient({ dynamoDBConfig: ddb.clientConfig, tableName: ddb.tableName });
  const lock = await locks.acquireLock('testing');
  console.log(JSON.stringify({ endpoint: ddb.endpoint, state: lock.state }));
  await locks.close();
} finally {
  await ddb.stop();
}
