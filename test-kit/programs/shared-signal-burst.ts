/**
 * A separate process that starts a burst of acquisitions bounded by one
 * shared `signal` (free locks, then locks held elsewhere, whose waits the
 * signal ends), and reports every process warning Node emitted meanwhile:
 * Node's listener-leak warnings reach the real process only, not a jest test.
 *
 * Usage: tsx test-kit/programs/shared-signal-burst.ts <endpoint> <table> <burst> <heldPrefix>
 */
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { LockClient } from '../../src/index.js';

const [endpoint, tableName, burst, heldPrefix] = process.argv.slice(2);
if (endpoint === undefined || tableName === undefined || burst === undefined || heldPrefix === undefined) {
  throw new Error('usage: shared-signal-burst <endpoint> <table> <burst> <heldPrefix>');
}

const warnings: string[] = [];
process.on('warning', (warning) => warnings.push(`${warning.name}: ${warning.message}`));

const client = new LockClient({
  dynamoDB: new DynamoDBClient({ endpoint, region: 'us-east-1', credentials: { accessKeyId: 'burst', secretAccessKey: 'burst' } }),
  tableName,
  ownerName: 'burst',
});
const keys = Array.from({ length: Number(burst) }, (_, i) => i);

const shared = AbortSignal.timeout(30_000);
const free = await Promise.all(keys.map((i) => client.acquireLock(`free-${i}`, { signal: shared })));

const controller = new AbortController();
const waits = keys.map((i) =>
  client.acquireLock(`${heldPrefix}${i}`, { signal: controller.signal, refreshPeriod: 100, additionalTimeToWaitForLock: 30_000 }),
);
await new Promise((resolve) => setTimeout(resolve, 500));
controller.abort(new Error('enough'));
const waited = await Promise.allSettled(waits);

await client.close();
// Warnings are emitted on the next tick.
await new Promise((resolve) => setImmediate(resolve));
process.stdout.write(
  `${JSON.stringify({
    event: 'done',
    acquired: free.length,
    abortedWaits: waited.filter((outcome) => outcome.status === 'rejected' && (outcome.reason as Error).message === 'enough').length,
    warnings,
  })}\n`,
);
