/**
 * Scenario (d): a fresh client takes a lock whose holder was killed an hour
 * ago, with and without the `clockBound` option. Nobody waits an hour: each
 * run writes the item a killed stamping holder's last heartbeat would have
 * left (its RVN and a stamp of an hour ago, the bench's lease), then a new
 * client (new DynamoDB client, new LockClient) calls `acquireLock`. Measured:
 * from that call until it returns. Without the option the waiter must watch
 * the RVN for a whole lease (Java's rule); with it the stamp proves the lease
 * over at once.
 */
import { PutItemCommand } from '@aws-sdk/client-dynamodb';
import { randomUUID } from 'node:crypto';
import { LockClient } from '../src/index.js';
import { countCalls } from '../test-kit/call-counter.js';
import { benchDynamoDB, tableOf, type LockSettings } from './acquire-clients.js';
import { acquireRow, percentile, type Row } from './report.js';

const HOUR_MS = 3_600_000;
const MAX_SKEW_MS = 100;

export async function benchLongDead(endpoint: string, runs: number, settings: LockSettings): Promise<Row[]> {
  const rows: Row[] = [];
  for (const bounded of [false, true]) {
    const times: number[] = [];
    let calls = 0;
    for (let run = 0; run < runs; run++) {
      const key = `long-dead-${bounded ? 'bounded' : 'java-rule'}-${Date.now().toString(36)}-${run}`;
      await leaveKilledHolder(endpoint, key, settings.leaseMs);
      const dynamoDB = benchDynamoDB(endpoint);
      const counter = countCalls(dynamoDB);
      const client = new LockClient({
        dynamoDB,
        tableName: tableOf('dynamodb-lock').tableName,
        ownerName: `long-dead-${run}`,
        leaseDuration: settings.leaseMs,
        heartbeatPeriod: settings.heartbeatMs,
        ...(bounded ? { clockBound: { maxSkew: MAX_SKEW_MS } } : {}),
      });
      try {
        const started = performance.now();
        const lock = await client.acquireLock(key, { refreshPeriod: settings.pollMs, additionalTimeToWaitForLock: Infinity });
        times.push(performance.now() - started);
        calls += counter.total();
        await lock.release();
      } finally {
        await client.close();
        dynamoDB.destroy();
      }
    }
    const sorted = [...times].sort((a, b) => a - b);
    rows.push(
      acquireRow({
        client: bounded ? `dynamodb-lock+clockBound(${MAX_SKEW_MS}ms)` : 'dynamodb-lock',
        scenario: 'fresh client, holder killed 1 h ago (item written with a 1 h old stamp)',
        p50Ms: percentile(sorted, 50),
        p99Ms: percentile(sorted, 99),
        callsPerCycle: calls / runs,
        takeoverMs: percentile(sorted, 50),
        maxTakeoverMs: sorted[sorted.length - 1] ?? null,
        leaseMs: settings.leaseMs,
        pollMs: settings.pollMs,
        cycles: runs,
      }),
    );
  }
  return rows;
}

/** The item a stamping holder killed an hour ago left: its last heartbeat's RVN and stamp. */
async function leaveKilledHolder(endpoint: string, key: string, leaseMs: number): Promise<void> {
  const dynamoDB = benchDynamoDB(endpoint);
  const rvn = randomUUID();
  try {
    await dynamoDB.send(
      new PutItemCommand({
        TableName: tableOf('dynamodb-lock').tableName,
        Item: {
          key: { S: key },
          ownerName: { S: 'killed-an-hour-ago' },
          leaseDuration: { S: String(leaseMs) },
          recordVersionNumber: { S: rvn },
          rvnWrittenAt: { S: `${rvn} ${Date.now() - HOUR_MS}` },
        },
      }),
    );
  } finally {
    dynamoDB.destroy();
  }
}
