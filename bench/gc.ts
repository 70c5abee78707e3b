/**
 * `npm run bench -- gc [--items 100000,...]`: one `collectAbandoned` pass
 * over a table of abandoned items (a tenth of them released), each with a
 * 1 s lease, as a table looks after its holders died. Measured: the pass's
 * time, the DynamoDB calls it made (Scan pages and DeleteItems), and the
 * items deleted. The items are written beforehand with BatchWriteItem, outside
 * the measurement.
 */
import { BatchWriteItemCommand, type BatchWriteItemCommandOutput, type WriteRequest } from '@aws-sdk/client-dynamodb';
import { randomUUID } from 'node:crypto';
import { LockClient } from '../src/index.js';
import { countCalls } from '../test-kit/call-counter.js';
import { benchDynamoDB } from './acquire-clients.js';
import type { Row } from './report.js';

const LEASE_MS = 1_000;
const RELEASED_SHARE = 0.1;
const BATCH = 25;
const BATCHES_IN_FLIGHT = 8;

export const GC_ITEMS: readonly number[] = [100_000];

export async function benchGc(endpoint: string, itemCounts: readonly number[] = GC_ITEMS): Promise<Row[]> {
  const rows: Row[] = [];
  for (const items of itemCounts) rows.push(await pass(endpoint, items));
  return rows;
}

async function pass(endpoint: string, items: number): Promise<Row> {
  const tableName = `bench-gc-${items}-${Date.now().toString(36)}`;
  const dynamoDB = benchDynamoDB(endpoint);
  const client = new LockClient({ dynamoDB, tableName, ownerName: 'bench-gc' });
  try {
    await client.createLockTable();
    process.stderr.write(`gc bench: writing ${items} abandoned items\n`);
    await writeAbandoned(dynamoDB, tableName, items);
    const calls = countCalls(dynamoDB);
    process.stderr.write(`gc bench: collecting\n`);
    const started = performance.now();
    const report = await client.collectAbandoned({ maxDuration: 3_600_000 });
    const passMs = performance.now() - started;
    const counts = calls.counts();
    return {
      items,
      leaseMs: LEASE_MS,
      passMs: Math.round(passMs),
      deleted: report.deleted.length,
      left: report.left.length,
      scanCalls: counts['Scan'] ?? 0,
      deleteCalls: counts['DeleteItem'] ?? 0,
      calls: calls.total(),
      deletedPerSecond: Math.round(report.deleted.length / ((passMs - LEASE_MS) / 1_000)),
    };
  } finally {
    await client.close();
    dynamoDB.destroy();
  }
}

/** The items of `count` holders that died, a tenth of them after releasing without delete. */
async function writeAbandoned(dynamoDB: ReturnType<typeof benchDynamoDB>, tableName: string, count: number): Promise<void> {
  const requests: WriteRequest[] = Array.from({ length: count }, (_, i) => ({
    PutRequest: {
      Item: {
        key: { S: `job-${i}` },
        ownerName: { S: `dead-${i % 97}` },
        leaseDuration: { S: String(LEASE_MS) },
        recordVersionNumber: { S: randomUUID() },
        ...(i % Math.round(1 / RELEASED_SHARE) === 0 ? { isReleased: { S: '1' } } : {}),
      },
    },
  }));
  const batches: WriteRequest[][] = [];
  for (let i = 0; i < requests.length; i += BATCH) batches.push(requests.slice(i, i + BATCH));
  const write = async (): Promise<void> => {
    for (let batch = batches.pop(); batch !== undefined; batch = batches.pop()) {
      let unprocessed: WriteRequest[] | undefined = batch;
      while (unprocessed !== undefined && unprocessed.length > 0) {
        const reply: BatchWriteItemCommandOutput = await dynamoDB.send(
          new BatchWriteItemCommand({ RequestItems: { [tableName]: unprocessed } }),
        );
        unprocessed = reply.UnprocessedItems?.[tableName];
      }
    }
  };
  await Promise.all(Array.from({ length: BATCHES_IN_FLIGHT }, write));
}
