/**
 * A separate process that acquires one lock, heartbeats it, and reports on
 * stdout as JSON lines until it is killed. Tests and the demo SIGKILL it to
 * play a holder that dies without releasing.
 *
 * Usage: tsx test-kit/programs/holder-process.ts <endpoint> <table> <key> <owner> <leaseMs> <heartbeatMs>
 */
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { LockClient } from '../../src/index.js';

const [endpoint, tableName, key, ownerName, leaseMs, heartbeatMs] = process.argv.slice(2);
if (endpoint === undefined || tableName === undefined || key === undefined || ownerName === undefined) {
  throw new Error('usage: holder-process <endpoint> <table> <key> <owner> [leaseMs] [heartbeatMs]');
}

const report = (event: string, fields: object = {}): void => {
  process.stdout.write(`${JSON.stringify({ event, pid: process.pid, ...fields })}\n`);
};

const client = new LockClient({
  dynamoDB: new DynamoDBClient({
    endpoint,
    region: 'us-east-1',
    credentials: { accessKeyId: 'holder', secretAccessKey: 'holder' },
  }),
  tableName,
  ownerName,
  leaseDuration: Number(leaseMs ?? 2000),
  heartbeatPeriod: Number(heartbeatMs ?? 500),
});

const lock = await client.acquireLock(key, { additionalTimeToWaitForLock: 30_000 });
report('acquired', { rvn: lock.recordVersionNumber, leaseMs: lock.leaseDuration });

// Report each heartbeat the background scheduler confirms; the interval also keeps the process alive.
let lastRvn = lock.recordVersionNumber;
setInterval(() => {
  if (lock.recordVersionNumber !== lastRvn) {
    lastRvn = lock.recordVersionNumber;
    report('heartbeat', { rvn: lastRvn });
  }
}, 20);
