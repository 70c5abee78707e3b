/**
 * A holder that is paused between the check of its guarded write and the
 * write itself: it acquires one lock, starts `lock.transactWrite` (a Put of
 * one item into the data table), and SIGSTOPs itself the moment the guarded
 * write leaves the lock client for the AWS SDK, after every local check has
 * passed. Once the test sends SIGCONT, it reports how the write ended.
 *
 * Usage: tsx test-kit/programs/paused-writer-process.ts <endpoint> <lockTable> <dataTable> <key> <owner> <leaseMs> <heartbeatMs>
 * Reports JSON lines: `acquired` {rvn}, `pausing` {guardRvn}, then `outcome` {committed} or {error, kind, holder}.
 */
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { LockClient, isLockLostError } from '../../src/index.js';

const [endpoint, lockTable, dataTable, key, ownerName, leaseMs, heartbeatMs] = process.argv.slice(2);
if (endpoint === undefined || lockTable === undefined || dataTable === undefined || key === undefined || ownerName === undefined) {
  throw new Error('usage: paused-writer-process <endpoint> <lockTable> <dataTable> <key> <owner> <leaseMs> <heartbeatMs>');
}

// Writes to a pipe are synchronous on Linux: each line is out before the next statement, SIGSTOP included.
const report = (event: string, fields: object = {}): void => {
  process.stdout.write(`${JSON.stringify({ event, pid: process.pid, ...fields })}\n`);
};

const sdk = new DynamoDBClient({ endpoint, region: 'us-east-1', credentials: { accessKeyId: 'pausedwriter', secretAccessKey: 'x' } });
let paused = false;
const dynamoDB: Pick<DynamoDBClient, 'send'> = {
  send: ((
    command: {
      constructor: { name: string };
      input: { TransactItems?: { ConditionCheck?: { ExpressionAttributeValues?: Record<string, { S?: string }> } }[] };
    },
    options?: unknown,
  ) => {
    if (command.constructor.name === 'TransactWriteItemsCommand' && !paused) {
      paused = true;
      report('pausing', { guardRvn: command.input.TransactItems?.[0]?.ConditionCheck?.ExpressionAttributeValues?.[':rvn']?.S });
      process.kill(process.pid, 'SIGSTOP');
    }
    return (sdk.send as (c: unknown, o?: unknown) => Promise<unknown>)(command, options);
  }) as DynamoDBClient['send'],
};

const client = new LockClient({
  dynamoDB,
  tableName: lockTable,
  ownerName,
  leaseDuration: Number(leaseMs),
  heartbeatPeriod: Number(heartbeatMs),
});
const lock = await client.acquireLock(key, { additionalTimeToWaitForLock: 30_000 });
report('acquired', { rvn: lock.recordVersionNumber });

try {
  lock.throwIfLost();
  await lock.transactWrite([{ Put: { TableName: dataTable, Item: { id: { S: key }, writer: { S: ownerName } } } }]);
  report('outcome', { committed: true, state: lock.state });
} catch (error) {
  report('outcome', {
    committed: false,
    error: (error as Error).name,
    kind: isLockLostError(error) ? error.kind : undefined,
    holder: isLockLostError(error) ? error.holder?.ownerName : undefined,
    state: lock.state,
  });
}
// Stay until the test kills us.
setInterval(() => undefined, 1_000);
