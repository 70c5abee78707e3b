/**
 * `npm run bench -- serverless [--runs N] [--remaining MS]`: a Lambda
 * invocation holding a lock is killed at its deadline (test-kit/lambda-runner.ts,
 * test-kit/programs/holding-handler.ts: the work ignores the lock's signal,
 * so the lock is still held when the kill comes), and the next invocation,
 * in an environment already warm, asks for the lock right after the kill.
 * Measured is the time from the kill until that invocation holds the lock,
 * in one run for three ways of holding it:
 *
 * - `bounded`: `invocationDeadline` with the invocation's remaining time:
 *   the holder's last write states at most the safety margin, a heartbeat
 *   period and the kill overrun (2 s), so the wait is about that;
 * - `lease`: the configured lease only (20 s): a waiter that first sees the
 *   last RVN after the kill waits that whole lease;
 * - `clockBound`: the configured lease and `clockBound` (maxSkew 100 ms) on
 *   both: the waiter counts the lease from the last write's wall-clock stamp.
 */
import { LockClient } from '../src/index.js';
import { LambdaRunner } from '../test-kit/lambda-runner.js';
import { percentile, type Row } from './report.js';
import { benchDynamoDB } from './acquire-clients.js';

const HANDLER = new URL('../test-kit/programs/holding-handler.ts', import.meta.url).pathname;
const LEASE_MS = 20_000;
const HEARTBEAT_MS = 5_000;
const MAX_SKEW_MS = 100;
const MODES = ['bounded', 'lease', 'clockBound'] as const;
type Mode = (typeof MODES)[number];

export interface ServerlessOptions {
  /** Kills per mode. @default 5 */
  readonly runs?: number | undefined;
  /** The remaining time of the invocation that is killed. @default 10000 */
  readonly remainingMs?: number | undefined;
}

export async function benchServerless(endpoint: string, options: ServerlessOptions = {}): Promise<Row[]> {
  const runs = options.runs ?? 5;
  const remainingMs = options.remainingMs ?? 10_000;
  const tableName = `bench-serverless-${Date.now().toString(36)}`;
  const dynamoDB = benchDynamoDB(endpoint);
  const creator = new LockClient({ dynamoDB, tableName });
  await creator.createLockTable({ ifNotExists: true });
  await creator.close();
  dynamoDB.destroy();
  const rows: Row[] = [];
  for (const mode of MODES) {
    const env = environmentOf(endpoint, tableName, mode);
    const next = await warm(new LambdaRunner(HANDLER, env));
    const waits: number[] = [];
    try {
      for (let run = 0; run < runs; run++) {
        const key = `serverless-${mode}-${run}`;
        const dying = await warm(new LambdaRunner(HANDLER, env));
        try {
          const event = { keys: [key], holdMs: 10 * remainingMs, bounded: mode === 'bounded' };
          const timedOut = dying.invoke(event, remainingMs, { killAtDeadline: true });
          await dying.next((line) => line.event === 'holding');
          const killed = await timedOut;
          if (killed.line.event !== 'killed') throw new Error(`the invocation was not killed: ${JSON.stringify(killed.line)}`);
          const taken = await next.invoke({ keys: [key], holdMs: 0, bounded: mode === 'bounded' }, 120_000);
          if (taken.line.event !== 'returned') throw new Error(`the next invocation failed: ${JSON.stringify(taken.line)}`);
          waits.push(taken.at - killed.at);
        } finally {
          dying.kill();
        }
      }
    } finally {
      next.kill();
    }
    const sorted = waits.sort((a, b) => a - b);
    rows.push({
      mode,
      runs,
      leaseMs: LEASE_MS,
      heartbeatMs: HEARTBEAT_MS,
      remainingMs,
      p50Ms: percentile(sorted, 50),
      maxMs: sorted[sorted.length - 1] ?? null,
    });
  }
  return rows;
}

function environmentOf(endpoint: string, tableName: string, mode: Mode): NodeJS.ProcessEnv {
  return {
    ...process.env,
    AWS_REGION: 'us-east-1',
    AWS_ACCESS_KEY_ID: 'bench',
    AWS_SECRET_ACCESS_KEY: 'bench',
    AWS_ENDPOINT_URL_DYNAMODB: endpoint,
    LOCK_TABLE: tableName,
    LEASE_MS: String(LEASE_MS),
    HEARTBEAT_MS: String(HEARTBEAT_MS),
    ...(mode === 'clockBound' ? { CLOCK_BOUND_MS: String(MAX_SKEW_MS) } : {}),
  };
}

/** Waits until the environment has loaded its handler, as a warm one has. */
async function warm(runner: LambdaRunner): Promise<LambdaRunner> {
  await runner.next((line) => line.event === 'ready', 120_000);
  return runner;
}
