/**
 * `npm run bench -- guarded`: what a guarded write costs beside the writes it
 * replaces, under one held lock, side by side in alternating rounds against
 * one DynamoDB Local:
 *
 * - `plain`: the item written with UpdateItem after `lock.throwIfLost()`, as
 *   without guarded writes;
 * - `transaction`: the same items in a TransactWriteItems call of their own,
 *   without the lock's check (what the transaction alone costs);
 * - `guarded`: `lock.transactWrite(items)`, the same items and the check;
 *
 * each with 1 item and with 10 (plain: 10 UpdateItem calls one after the
 * other). Then acquire + release cycles with and without fencing tokens
 * (`fencingTableName`). Every op's DynamoDB calls are counted by the SDK
 * middleware of the client it runs on.
 */
import { TransactWriteItemsCommand, UpdateItemCommand, type DynamoDBClient, type TransactWriteItem } from '@aws-sdk/client-dynamodb';
import { countCalls, type CallCounter } from '../test-kit/call-counter.js';
import { createIdKeyedTable, increment } from '../test-kit/data-table.js';
import { LockClient, type Lock } from '../src/index.js';
import { benchDynamoDB } from './acquire-clients.js';
import { percentile, type Row } from './report.js';

const ROUNDS = 4;
const WARM_UP = 30;
const LOCK_TABLE = 'bench-guarded-locks';
const FENCING_TABLE = 'bench-guarded-fencing';
const DATA_TABLE = 'bench-guarded-data';

interface Sample {
  readonly latencies: number[];
  seconds: number;
  calls: number;
}

interface Scenario {
  readonly name: string;
  readonly items: number;
  /** DynamoDB calls of this kind of op so far. */
  readonly calls: () => number;
  run(): Promise<void>;
}

const updates = (count: number): TransactWriteItem[] => Array.from({ length: count }, (_, i) => increment(DATA_TABLE, `item-${i}`));

async function measure(scenario: Scenario, count: number, sample?: Sample): Promise<void> {
  const callsBefore = scenario.calls();
  const started = performance.now();
  for (let i = 0; i < count; i++) {
    const t0 = performance.now();
    await scenario.run();
    sample?.latencies.push(performance.now() - t0);
  }
  if (sample !== undefined) {
    sample.seconds += (performance.now() - started) / 1000;
    sample.calls += scenario.calls() - callsBefore;
  }
}

/**
 * Writes under one held lock: plain ones on a client of their own, guarded
 * ones on the lock's client, whose heartbeats (UpdateItem) are not counted.
 */
function writeScenarios(writer: DynamoDBClient, lock: Lock, lockCalls: CallCounter): Scenario[] {
  const writerCalls = countCalls(writer);
  const calls = (): number => writerCalls.total();
  const guardedCalls = (): number => lockCalls.total() - (lockCalls.counts()['UpdateItem'] ?? 0);
  const scenarios: Scenario[] = [];
  for (const items of [1, 10]) {
    const batch = updates(items);
    scenarios.push(
      {
        name: 'plain UpdateItem after throwIfLost',
        items,
        calls,
        run: async () => {
          for (const item of batch) {
            lock.throwIfLost();
            await writer.send(new UpdateItemCommand(item.Update!));
          }
        },
      },
      {
        name: 'TransactWriteItems without the check',
        items,
        calls,
        run: async () => {
          lock.throwIfLost();
          await writer.send(new TransactWriteItemsCommand({ TransactItems: batch }));
        },
      },
      { name: 'guarded: lock.transactWrite', items, calls: guardedCalls, run: () => lock.transactWrite(batch) },
    );
  }
  return scenarios;
}

function acquireScenarios(plain: LockClient, plainCalls: CallCounter, fenced: LockClient, fencedCalls: CallCounter): Scenario[] {
  const cycle = (client: LockClient) => async () => {
    const lock = await client.acquireLock('cycled', { signal: AbortSignal.timeout(30_000) });
    await lock.release();
  };
  return [
    { name: 'acquire + release', items: 0, calls: () => plainCalls.total(), run: cycle(plain) },
    { name: 'acquire + release with fencing token', items: 0, calls: () => fencedCalls.total(), run: cycle(fenced) },
  ];
}

export async function benchGuarded(endpoint: string, totalCycles: number): Promise<Row[]> {
  const perRound = Math.max(1, Math.ceil(totalCycles / ROUNDS));
  const progress = (what: string): void => void process.stderr.write(`guarded bench: ${what}\n`);
  const setup = benchDynamoDB(endpoint);
  const holderDynamoDB = benchDynamoDB(endpoint);
  const writer = benchDynamoDB(endpoint);
  const plainDynamoDB = benchDynamoDB(endpoint);
  const fencedDynamoDB = benchDynamoDB(endpoint);
  const clients: LockClient[] = [];
  const client = (dynamoDB: DynamoDBClient, ownerName: string, fencingTableName?: string): LockClient => {
    const made = new LockClient({ dynamoDB, tableName: LOCK_TABLE, ownerName, ...(fencingTableName === undefined ? {} : { fencingTableName }) });
    clients.push(made);
    return made;
  };
  try {
    const creator = client(setup, 'bench-setup', FENCING_TABLE);
    await creator.createLockTable({ ifNotExists: true });
    await creator.createFencingTable({ ifNotExists: true });
    await createIdKeyedTable(setup, DATA_TABLE).catch((error: unknown) => {
      if ((error as { name?: string }).name !== 'ResourceInUseException') throw error;
    });

    const lockCalls = countCalls(holderDynamoDB);
    const lock = await client(holderDynamoDB, 'bench-holder').acquireLock('held');
    const scenarios = [
      ...writeScenarios(writer, lock, lockCalls),
      ...acquireScenarios(
        client(plainDynamoDB, 'bench-plain'),
        countCalls(plainDynamoDB),
        client(fencedDynamoDB, 'bench-fenced', FENCING_TABLE),
        countCalls(fencedDynamoDB),
      ),
    ];
    const samples = new Map<Scenario, Sample>(scenarios.map((s) => [s, { latencies: [], seconds: 0, calls: 0 }]));
    progress(`warm-up, ${WARM_UP} ops per scenario`);
    for (const scenario of scenarios) await measure(scenario, WARM_UP);
    for (let round = 0; round < ROUNDS; round++) {
      progress(`round ${round + 1} of ${ROUNDS}, ${perRound} ops per scenario`);
      for (const scenario of round % 2 === 0 ? scenarios : [...scenarios].reverse()) {
        await measure(scenario, perRound, samples.get(scenario));
      }
    }
    if (lock.state !== 'held') throw new Error(`the benchmark's lock was lost: ${String(lock.signal.reason)}`);
    return scenarios.map((scenario) => {
      const sample = samples.get(scenario) as Sample;
      const sorted = [...sample.latencies].sort((a, b) => a - b);
      return {
        scenario: scenario.name,
        items: scenario.items,
        opsPerSecond: sorted.length / sample.seconds,
        p50Ms: percentile(sorted, 50),
        p99Ms: percentile(sorted, 99),
        callsPerOp: sample.calls / sorted.length,
        ops: sorted.length,
      };
    });
  } finally {
    await Promise.allSettled(clients.map((c) => c.close()));
    for (const dynamoDB of [setup, holderDynamoDB, writer, plainDynamoDB, fencedDynamoDB]) dynamoDB.destroy();
  }
}
