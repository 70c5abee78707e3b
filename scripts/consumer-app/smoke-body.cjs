// Creates the table (tolerating one that exists), acquires a lock, reads it
// back, releases it. The endpoint comes from DYNAMODB_ENDPOINT.
exports.run = async function run({ DynamoDBClient, LockClient }, flavour) {
  const dynamoDB = new DynamoDBClient({
    endpoint: process.env.DYNAMODB_ENDPOINT,
    region: 'us-east-1',
    credentials: { accessKeyId: 'local', secretAccessKey: 'local' },
  });
  const locks = new LockClient({ dynamoDB, tableName: process.env.LOCK_TABLE });
  try {
    await locks.createLockTable({ ifNotExists: true });
    const lock = await locks.acquireLock(`smoke-${flavour}`);
    const seen = await locks.getLock(`smoke-${flavour}`);
    const released = await lock.release();
    return { flavour, node: process.version, held: seen === lock, released };
  } finally {
    await locks.close();
    dynamoDB.destroy();
  }
};
