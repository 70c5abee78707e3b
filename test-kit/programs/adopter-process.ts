/**
 * A separate process that adopts a lock handed off to it (the next step of a
 * workflow), keeps it for `keepMs` under a lease of `leaseMs` (default 1 s),
 * reports, then releases it, and exits.
 * It reports on stdout as JSON lines.
 *
 * Usage: tsx test-kit/programs/adopter-process.ts <endpoint> <table> <owner> <handle JSON> [keepMs] [leaseMs]
 */
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { LockClient } from '../../src/index.js';

const [endpoint, tableName, ownerName, handle, keepMs, leaseMs] = process.argv.slice(2);
if (endpoint === undefined || tableName === undefined || ownerName === undefined || handle === undefined) {
  throw new Error('usage: adopter-process <endpoint> <table> <owner> <handle JSON> [keepMs] [leaseMs]');
}
const leaseDuration = Number(leaseMs ?? 1_000);

const report = (event: string, fields: object = {}): void => {
  process.stdout.write(`${JSON.stringify({ event, pid: process.pid, ...fields })}\n`);
};

const client = new LockClient({
  dynamoDB: new DynamoDBClient({ endpoint, region: 'us-east-1', credentials: { accessKeyId: 'adopter', secretAccessKey: 'adopter' } }),
  tableName,
  ownerName,
  leaseDuration,
  heartbeatPeriod: 250,
});

try {
  const lock = await client.adoptLock(handle);
  report('adopted', { rvn: lock.recordVersionNumber, data: lock.dataText });
  await new Promise((resolve) => setTimeout(resolve, Number(keepMs ?? 0)));
  report('kept', { rvn: lock.recordVersionNumber, held: lock.isHeld() });
  report('released', { released: await lock.release() });
} catch (error) {
  report('refused', { name: (error as Error).name, code: (error as { code?: unknown }).code });
} finally {
  await client.close();
}
