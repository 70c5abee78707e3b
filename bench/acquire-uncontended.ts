/**
 * Scenario (a): uncontended acquire + release cycles on one key, each
 * library on its own table of the same DynamoDB Local, in alternating rounds
 * so that neither profits from a warmer JVM. Each cycle re-takes the lock
 * it just released: dynamodb-lock with turns on beside it shows what
 * turns cost a client that is alone. Also our four write forms
 * (PutItem or UpdateItem acquisition, delete or mark-released release).
 */
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { LockClient } from '../src/index.js';
import { countCalls } from '../test-kit/call-counter.js';
import { VARIANTS, benchDynamoDB, openClient, tableOf, type BenchLockClient, type LockSettings } from './acquire-clients.js';
import { acquireRow, percentile, type Row } from './report.js';

const ROUNDS = 4;
const WARM_UP_CYCLES = 30;
const STUCK_MS = 30_000;

interface Sample {
  readonly latencies: number[];
  seconds: number;
  calls: number;
}

async function cycles(client: BenchLockClient, key: string, count: number, sample?: Sample): Promise<void> {
  const callsBefore = client.calls.total();
  const started = performance.now();
  for (let i = 0; i < count; i++) {
    const t0 = performance.now();
    // Nobody else wants this key: a wait this long means something is broken.
    const lock = await client.acquire(key, AbortSignal.timeout(STUCK_MS));
    await lock.release();
    sample?.latencies.push(performance.now() - t0);
  }
  if (sample !== undefined) {
    sample.seconds += (performance.now() - started) / 1000;
    sample.calls += client.calls.total() - callsBefore;
  }
}

export async function benchUncontended(endpoint: string, totalCycles: number, settings: LockSettings): Promise<Row[]> {
  const perRound = Math.max(1, Math.ceil(totalCycles / ROUNDS));
  const clients = VARIANTS.map((variant) => {
    const sample: Sample = { latencies: [], seconds: 0, calls: 0 };
    const client = openClient(variant.client, endpoint, { ...settings, turnsOn: variant.turnsOn }, `bench-uncontended-${variant.label}`);
    return { variant, client, sample };
  });
  // Each on a key of its own: the turns of one must not meet the other's holds.
  const keyOf = (label: string): string => `uncontended-${label}`;
  try {
    for (const { variant, client } of clients) await cycles(client, keyOf(variant.label), WARM_UP_CYCLES);
    for (let round = 0; round < ROUNDS; round++) {
      for (const { variant, client, sample } of round % 2 === 0 ? clients : [...clients].reverse()) {
        await cycles(client, keyOf(variant.label), perRound, sample);
      }
    }
  } finally {
    await Promise.all(clients.map(({ client }) => client.close()));
  }
  const rows = clients.map(({ variant, sample }) => summarize(variant.label, 'uncontended acquire+release', sample, settings));
  return [...rows, ...(await benchWriteForms(endpoint, perRound * ROUNDS, settings))];
}

function summarize(client: string, scenario: string, sample: Sample, settings: LockSettings): Row {
  const sorted = [...sample.latencies].sort((a, b) => a - b);
  return acquireRow({
    client,
    scenario,
    opsPerSecond: sorted.length / sample.seconds,
    p50Ms: percentile(sorted, 50),
    p99Ms: percentile(sorted, 99),
    callsPerCycle: sample.calls / sorted.length,
    leaseMs: settings.leaseMs,
    cycles: sorted.length,
  });
}

const WRITE_FORMS = [
  { name: 'update+delete', updateExistingLockRecord: true, deleteLockOnRelease: true },
  { name: 'put+markReleased', updateExistingLockRecord: false, deleteLockOnRelease: false },
  { name: 'update+markReleased', updateExistingLockRecord: true, deleteLockOnRelease: false },
] as const;

/** Our other write forms (the default, put+delete, is the row above). */
async function benchWriteForms(endpoint: string, count: number, settings: LockSettings): Promise<Row[]> {
  const rows: Row[] = [];
  for (const { name, ...form } of WRITE_FORMS) {
    const dynamoDB: DynamoDBClient = benchDynamoDB(endpoint);
    const calls = countCalls(dynamoDB);
    const client = new LockClient({
      dynamoDB,
      tableName: tableOf('dynamodb-lock').tableName,
      ownerName: `bench-${name}`,
      leaseDuration: settings.leaseMs,
      heartbeatPeriod: settings.heartbeatMs,
    });
    const sample: Sample = { latencies: [], seconds: 0, calls: 0 };
    const bench: BenchLockClient = {
      name: 'dynamodb-lock',
      calls,
      acquire: async (key, signal) => {
        const lock = await client.acquireLock(key, { ...form, signal });
        return { release: async () => void (await lock.release()) };
      },
      close: () => client.close(),
    };
    try {
      await cycles(bench, `form-${name}`, WARM_UP_CYCLES);
      await cycles(bench, `form-${name}`, count, sample);
    } finally {
      await client.close();
      dynamoDB.destroy();
    }
    rows.push(summarize('dynamodb-lock', `uncontended ${name}`, sample, settings));
  }
  return rows;
}
