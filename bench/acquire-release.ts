/**
 * Uncontended acquire + release cycles against DynamoDB Local, for each
 * write form side by side: PutItem vs UpdateItem acquisition, delete vs
 * mark-released release. Reports cycles per second, latency percentiles and
 * DynamoDB calls per cycle (counted by SDK middleware).
 */
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { LockClient } from '../src/index.js';
import { percentile, type Row } from './report.js';

interface Variant {
  readonly name: string;
  readonly updateExistingLockRecord: boolean;
  readonly deleteLockOnRelease: boolean;
}

const VARIANTS: readonly Variant[] = [
  { name: 'put+delete', updateExistingLockRecord: false, deleteLockOnRelease: true },
  { name: 'put+markReleased', updateExistingLockRecord: false, deleteLockOnRelease: false },
  { name: 'update+delete', updateExistingLockRecord: true, deleteLockOnRelease: true },
  { name: 'update+markReleased', updateExistingLockRecord: true, deleteLockOnRelease: false },
];

function countingClient(endpoint: string): { dynamoDB: DynamoDBClient; calls: () => number } {
  const dynamoDB = new DynamoDBClient({
    endpoint,
    region: 'us-east-1',
    credentials: { accessKeyId: 'bench', secretAccessKey: 'bench' },
  });
  let calls = 0;
  dynamoDB.middlewareStack.add(
    (next) => async (args) => {
      calls++;
      return next(args);
    },
    { step: 'initialize', name: 'countCalls' },
  );
  return { dynamoDB, calls: () => calls };
}

export async function benchAcquireRelease(endpoint: string, cycles: number): Promise<Row[]> {
  const rows: Row[] = [];
  for (const variant of VARIANTS) {
    const { dynamoDB, calls } = countingClient(endpoint);
    const client = new LockClient({ dynamoDB, tableName: 'bench-acquire-release' });
    await client.createLockTable({ ifNotExists: true });
    const key = `cycle-${variant.name}`;
    const latencies: number[] = [];
    // Warm up connections and the JIT before measuring.
    for (let i = 0; i < 20; i++) await (await client.acquireLock(key, variant)).release();
    const callsBefore = calls();
    const started = performance.now();
    for (let i = 0; i < cycles; i++) {
      const t0 = performance.now();
      const lock = await client.acquireLock(key, variant);
      await lock.release();
      latencies.push(performance.now() - t0);
    }
    const seconds = (performance.now() - started) / 1000;
    latencies.sort((a, b) => a - b);
    rows.push({
      client: 'dynamodb-lock',
      scenario: `uncontended ${variant.name}`,
      cycles,
      opsPerSecond: cycles / seconds,
      p50Ms: percentile(latencies, 50),
      p99Ms: percentile(latencies, 99),
      callsPerCycle: (calls() - callsBefore) / cycles,
    });
    await client.close();
    dynamoDB.destroy();
  }
  return rows;
}
