/**
 * Pieces shared by the heartbeat benchmark's worker processes: the DynamoDB
 * client they use, a throwaway table, memory and lag bookkeeping.
 */
import { writeFileSync } from 'node:fs';
import { Agent } from 'node:http';
import { Session } from 'node:inspector/promises';
import { join } from 'node:path';
import { DeleteTableCommand, DynamoDBClient } from '@aws-sdk/client-dynamodb';

/**
 * One client per worker, with keep-alive sockets and enough of them that the
 * HTTP agent never queues requests behind the concurrency under test (the
 * SDK's default agent allows 50 sockets).
 */
export function benchDynamoDBClient(endpoint: string, maxSockets: number): DynamoDBClient {
  return new DynamoDBClient({
    endpoint,
    region: 'us-east-1',
    credentials: { accessKeyId: 'bench', secretAccessKey: 'bench' },
    requestHandler: { httpAgent: new Agent({ keepAlive: true, maxSockets }), connectionTimeout: 5_000, requestTimeout: 30_000 },
  });
}

/** Deletes a benchmark table so that DynamoDB Local does not keep its items for the rest of the run. */
export async function dropTable(dynamoDB: DynamoDBClient, tableName: string): Promise<void> {
  try {
    await dynamoDB.send(new DeleteTableCommand({ TableName: tableName }), { abortSignal: AbortSignal.timeout(30_000) });
  } catch (error) {
    process.stderr.write(`heartbeat bench: could not delete table ${tableName}: ${String(error)}\n`);
  }
}

export interface MemorySample {
  readonly rss: number;
  readonly heapTotal: number;
  readonly heapUsed: number;
  readonly external: number;
}

/**
 * RSS and heap after a full collection (the worker runs with --expose-gc).
 * The heap is read right after the second collection: heartbeats go on
 * allocating, and half a second later heapUsed also counts their garbage
 * (at 10 000 locks about 600 bytes per lock in one run). RSS is read later: V8 hands
 * freed pages back to the OS from a background thread shortly after a
 * collection, and in 9 readings of a 10 000-lock worker RSS right after one
 * was up to 32 MB (median 11 MB) more than 50 ms later, while from 50 ms to
 * 1 s after it moved by at most 2.5 MB.
 */
const PAGES_RETURNED_MS = 500;

export async function memoryAfterGC(): Promise<MemorySample> {
  const gc = globalThis.gc;
  if (typeof gc !== 'function') throw new Error('run the heartbeat worker with node --expose-gc');
  gc();
  await sleep(1_000);
  gc();
  const { heapTotal, heapUsed, external } = process.memoryUsage();
  await sleep(PAGES_RETURNED_MS);
  return { rss: process.memoryUsage.rss(), heapTotal, heapUsed, external };
}

/** Lags in 1 ms buckets up to a minute; allocated up front so it costs nothing per lock or per heartbeat. */
export class LagHistogram {
  readonly #buckets = new Uint32Array(60_001);
  #count = 0;
  #max = 0;

  record(lagMs: number): void {
    const bucket = Math.min(this.#buckets.length - 1, Math.max(0, Math.round(lagMs)));
    this.#buckets[bucket] = (this.#buckets[bucket] ?? 0) + 1;
    this.#count++;
    if (lagMs > this.#max) this.#max = lagMs;
  }

  get count(): number {
    return this.#count;
  }

  get max(): number {
    return this.#max;
  }

  percentile(p: number): number {
    if (this.#count === 0) return 0;
    const rank = Math.ceil((p / 100) * this.#count);
    let seen = 0;
    for (let ms = 0; ms < this.#buckets.length; ms++) {
      seen += this.#buckets[ms] ?? 0;
      if (seen >= rank) return ms;
    }
    return this.#max;
  }
}

export const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * With a directory (by default HEARTBEAT_BENCH_CPU_PROFILE=<dir>), profiles
 * the CPU from now until the returned function is called and writes
 * `<dir>/<name>-<pid>.cpuprofile` (open it in Chrome DevTools); without one,
 * does nothing. Unlike --cpu-prof, it covers only the measured window, not
 * the setup.
 */
export async function startCpuProfile(
  name: string,
  dir = process.env.HEARTBEAT_BENCH_CPU_PROFILE,
  samplingIntervalUs?: number,
): Promise<() => Promise<void>> {
  if (dir === undefined || dir === '') return async () => {};
  const session = new Session();
  session.connect();
  await session.post('Profiler.enable');
  if (samplingIntervalUs !== undefined) await session.post('Profiler.setSamplingInterval', { interval: samplingIntervalUs });
  await session.post('Profiler.start');
  return async () => {
    const { profile } = await session.post('Profiler.stop');
    writeFileSync(join(dir, `${name}-${process.pid}.cpuprofile`), JSON.stringify(profile));
    session.disconnect();
  };
}

/**
 * How the client's heartbeats went out while counting is on: single
 * UpdateItem calls, and BatchExecuteStatement calls by their number of
 * statements. Tells a client that is behind with full batches from one that
 * sends part-full ones, which cost the server a whole call each. Not the
 * shared `countCalls` (test-kit/call-counter.ts): that one keeps
 * every call's name, which over a window of 80 000 heartbeats would count as
 * the locks' memory, and it does not look inside a batch. Counts go into a
 * fixed array instead.
 */
export class HeartbeatCallCounter {
  counting = false;
  updateItemCalls = 0;
  /** Index k: batch calls of k statements. */
  readonly #batchesBySize: Uint32Array;

  constructor(client: Pick<DynamoDBClient, 'middlewareStack'>, maxBatchSize: number) {
    this.#batchesBySize = new Uint32Array(maxBatchSize + 1);
    client.middlewareStack.add(
      (next, context) => (args) => {
        if (this.counting) this.#count(context.commandName, args.input);
        return next(args);
      },
      { step: 'initialize', name: 'benchHeartbeatCallCounter' },
    );
  }

  #count(commandName: string | undefined, input: unknown): void {
    if (commandName === 'UpdateItemCommand') {
      this.updateItemCalls++;
    } else if (commandName === 'BatchExecuteStatementCommand') {
      const size = (input as { Statements?: unknown[] }).Statements?.length ?? 0;
      const slot = Math.min(size, this.#batchesBySize.length - 1);
      this.#batchesBySize[slot] = (this.#batchesBySize[slot] ?? 0) + 1;
    }
  }

  get batchCalls(): number {
    return this.#batchesBySize.reduce((sum, count) => sum + count, 0);
  }

  /** Mean statements per batch call, NaN without any. */
  get meanBatchSize(): number {
    const statements = this.#batchesBySize.reduce((sum, count, size) => sum + count * size, 0);
    return statements / this.batchCalls;
  }

  /** Share of batch calls that went out full, in per cent; NaN without any. */
  get fullBatchesPct(): number {
    return (100 * (this.#batchesBySize[this.#batchesBySize.length - 1] ?? 0)) / this.batchCalls;
  }
}
