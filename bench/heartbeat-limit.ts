/**
 * The physical limit: how many heartbeat-shaped conditional UpdateItem calls
 * per second DynamoDB Local serves to one Node process that does nothing
 * else. Bare `send()` calls, no lock client: the request is the library's
 * heartbeat (condition on RVN, owner and not released; SET a new RVN and the
 * lease), built by the same pure function, on pre-created items. Each of `c`
 * loops owns its own items, so no two calls ever race on one item.
 *
 * Short levels find the best concurrency; the limit itself is then measured at
 * that concurrency for as long as the window it is compared with, so that
 * both average over the same kinds of pauses (DynamoDB Local's collections,
 * the machine's other work) instead of a row's 40 s meeting the best of a few
 * 3.5 s samples.
 */
import { randomUUID } from 'node:crypto';
import { CreateTableCommand, PutItemCommand, UpdateItemCommand, waitUntilTableExists, type DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { buildHeartbeatRequest, encodeLockItem, withOldItemOnConditionFailure, type LockTable } from '../src/protocol/index.js';
import { benchDynamoDBClient, dropTable, startCpuProfile } from './heartbeat-support.js';

export interface LimitLevel {
  readonly concurrency: number;
  readonly items: number;
  readonly seconds: number;
  readonly callsPerSecond: number;
  readonly errors: number;
  readonly cpuMsPerCall: number;
  readonly p99LatencyMs: number;
}

export interface LimitResult {
  /** The short levels, in the order they ran. */
  readonly levels: readonly LimitLevel[];
  /** The best short level's calls per second. */
  readonly peakPerSecond: number;
  /** The best short level's concurrency held for `sustainSeconds`: the limit. */
  readonly sustained: LimitLevel;
}

export interface LimitOptions {
  readonly endpoint: string;
  readonly concurrencies: readonly number[];
  readonly secondsPerLevel: number;
  /** How long to hold the best concurrency after the short levels. */
  readonly sustainSeconds: number;
  readonly items: number;
  readonly leaseDuration: number;
}

const OWNER = 'bench-server-limit';
const WARM_UP_MS = 2_000;

export async function measureServerLimit(options: LimitOptions): Promise<LimitResult> {
  const maxConcurrency = Math.max(...options.concurrencies);
  const dynamoDB = benchDynamoDBClient(options.endpoint, Math.max(maxConcurrency, 128));
  const table: LockTable = { tableName: `bench-heartbeat-limit-${randomUUID().slice(0, 8)}`, partitionKeyName: 'key', sortKeyName: undefined };
  try {
    await dynamoDB.send(
      new CreateTableCommand({
        TableName: table.tableName,
        AttributeDefinitions: [{ AttributeName: 'key', AttributeType: 'S' }],
        KeySchema: [{ AttributeName: 'key', KeyType: 'HASH' }],
        BillingMode: 'PAY_PER_REQUEST',
      }),
    );
    await waitUntilTableExists({ client: dynamoDB, maxWaitTime: 60 }, { TableName: table.tableName });
    const rvns = await createItems(dynamoDB, table, options.items);
    const updater = new Updater(dynamoDB, table, rvns, options.leaseDuration);
    // Warm up DynamoDB Local's JIT and the sockets before anything counts.
    await updater.run(Math.min(64, maxConcurrency), WARM_UP_MS);
    const levels: LimitLevel[] = [];
    for (const concurrency of options.concurrencies) {
      levels.push(await updater.run(concurrency, options.secondsPerLevel * 1000));
      process.stderr.write(`heartbeat bench: server limit at concurrency ${concurrency}: ${levels.at(-1)?.callsPerSecond.toFixed(0)}/s\n`);
    }
    const best = bestLevel(levels);
    const sustained = await updater.run(best.concurrency, options.sustainSeconds * 1000);
    process.stderr.write(
      `heartbeat bench: server limit sustained at concurrency ${best.concurrency} for ${options.sustainSeconds} s: ${sustained.callsPerSecond.toFixed(0)}/s\n`,
    );
    return { levels, peakPerSecond: best.callsPerSecond, sustained };
  } finally {
    await dropTable(dynamoDB, table.tableName);
    dynamoDB.destroy();
  }
}

function bestLevel(levels: readonly LimitLevel[]): LimitLevel {
  const [first, ...rest] = levels;
  if (first === undefined) throw new Error('the server limit needs at least one concurrency level');
  return rest.reduce((a, b) => (b.callsPerSecond > a.callsPerSecond ? b : a), first);
}

async function createItems(dynamoDB: DynamoDBClient, table: LockTable, count: number): Promise<string[]> {
  const rvns = new Array<string>(count);
  let next = 0;
  const loop = async (): Promise<void> => {
    for (let i = next++; i < count; i = next++) {
      const rvn = randomUUID();
      const item = encodeLockItem(table, {
        partitionKey: `limit-${i}`,
        sortKey: undefined,
        ownerName: OWNER,
        recordVersionNumber: rvn,
        leaseDurationMs: 20_000,
        data: undefined,
        additionalAttributes: {},
      });
      await dynamoDB.send(new PutItemCommand({ TableName: table.tableName, Item: item }));
      rvns[i] = rvn;
    }
  };
  await Promise.all(Array.from({ length: 64 }, loop));
  return rvns;
}

class Updater {
  constructor(
    private readonly dynamoDB: DynamoDBClient,
    private readonly table: LockTable,
    private readonly rvns: string[],
    private readonly leaseDuration: number,
  ) {}

  async run(concurrency: number, durationMs: number): Promise<LimitLevel> {
    const items = this.rvns.length;
    if (items < concurrency) throw new Error(`need at least ${concurrency} items, have ${items}`);
    let calls = 0; // completed within the window
    let completed = 0; // completed at all, for CPU per call
    let errors = 0;
    const latencies: number[] = [];
    const stopProfile = await startCpuProfile(`server-limit-${concurrency}`);
    const cpuBefore = process.cpuUsage();
    const started = performance.now();
    const endAt = started + durationMs;
    const loop = async (first: number): Promise<void> => {
      for (let i = first; performance.now() < endAt; i = i + concurrency < items ? i + concurrency : first) {
        const newRvn = randomUUID();
        const request = withOldItemOnConditionFailure(
          buildHeartbeatRequest(
            this.table,
            { partitionKey: `limit-${i}`, sortKey: undefined, ownerName: OWNER, recordVersionNumber: this.rvns[i] as string },
            { newRecordVersionNumber: newRvn, leaseDurationMs: this.leaseDuration, refuseReleased: true },
          ),
        );
        const t0 = performance.now();
        try {
          await this.dynamoDB.send(new UpdateItemCommand(request.input as ConstructorParameters<typeof UpdateItemCommand>[0]));
          this.rvns[i] = newRvn;
          completed++;
          const t1 = performance.now();
          if (t1 <= endAt) {
            calls++;
            latencies.push(t1 - t0);
          }
        } catch (error) {
          errors++;
          if (errors === 1) process.stderr.write(`heartbeat bench: server-limit call failed: ${String(error)}\n`);
        }
      }
    };
    await Promise.all(Array.from({ length: concurrency }, (_, j) => loop(j)));
    const cpu = process.cpuUsage(cpuBefore);
    await stopProfile();
    latencies.sort((a, b) => a - b);
    return {
      concurrency,
      items,
      seconds: durationMs / 1000,
      callsPerSecond: calls / (durationMs / 1000),
      errors,
      cpuMsPerCall: (cpu.user + cpu.system) / 1000 / Math.max(1, completed),
      p99LatencyMs: latencies[Math.min(latencies.length - 1, Math.ceil(0.99 * latencies.length) - 1)] ?? 0,
    };
  }
}
