// Creates the table (tolerating one that exists), acquires a lock, reads it
// back, releases it, with the OpenTelemetry instrumentation on (no SDK: the
// API's no-op). The endpoint comes from DYNAMODB_ENDPOINT.
exports.run = async function run({ DynamoDBClient, LockClient, LockClientInstrumentation }, flavour) {
  const dynamoDB = new DynamoDBClient({
    endpoint: process.env.DYNAMODB_ENDPOINT,
    region: 'us-east-1',
    credentials: { accessKeyId: 'local', secretAccessKey: 'local' },
  });
  const telemetry = new LockClientInstrumentation();
  const locks = new LockClient({ dynamoDB: telemetry.wrapDynamoDB(dynamoDB), tableName: process.env.LOCK_TABLE });
  telemetry.instrument(locks);
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
