/**
 * One worker process of `npm run bench -- semaphore`: for a fixed time after
 * the parent says "go", takes one permit of the semaphore, runs a short
 * section, and gives the permit back, over and over. `permits` takes a
 * permit of this library's semaphore (`acquirePermit`); `counter` takes one
 * the way the AWS Step Functions sample "DDB semaphore concurrency control"
 * does, with one counter item: an UpdateItem that adds one to the count
 * and this holder's attribute while the count is below N, retried every poll
 * period while it is refused, and an UpdateItem that takes them off again.
 * Reports grants, their waits, the DynamoDB calls, and each section on the
 * shared wall clock (for the parent's check that at most N ran at once).
 *
 * Usage: semaphore-worker.ts <json: SemaphoreWorkerConfig>
 */
import { UpdateItemCommand } from '@aws-sdk/client-dynamodb';
import { setTimeout as sleep } from 'node:timers/promises';
import { ourLockClient, type LockSettings } from './acquire-clients.js';
import { lineFromParent, report, unlessStopped } from './acquire-processes.js';

export type SemaphoreMethod = 'permits' | 'counter';

export interface SemaphoreWorkerConfig {
  readonly endpoint: string;
  readonly method: SemaphoreMethod;
  /** The semaphore's name: its permits' keys, or the counter item's id. */
  readonly semaphore: string;
  readonly permits: number;
  /** The counter item's table (`counter` only). */
  readonly counterTable: string;
  /** Owner name. */
  readonly name: string;
  readonly settings: LockSettings;
  readonly criticalMs: number;
  readonly durationMs: number;
}

const config = JSON.parse(process.argv[2] ?? '') as SemaphoreWorkerConfig;
const { dynamoDB, calls, client } = ourLockClient(config.endpoint, config.settings, config.name);
const wallClock = (): number => performance.timeOrigin + performance.now();
const isRefused = (error: unknown): boolean => (error as { name?: string }).name === 'ConditionalCheckFailedException';

/** Takes a permit, returning how to give it back. */
async function take(signal: AbortSignal): Promise<() => Promise<unknown>> {
  if (config.method === 'permits') {
    const permit = await client.acquirePermit(config.semaphore, {
      permits: config.permits,
      refreshPeriod: config.settings.pollMs,
      additionalTimeToWaitForLock: Infinity,
      signal,
    });
    return () => permit.release();
  }
  const Key = { id: { S: config.semaphore } };
  const names = { '#count': 'currentlockcount', '#holder': config.name };
  for (;;) {
    try {
      await dynamoDB.send(
        new UpdateItemCommand({
          TableName: config.counterTable,
          Key,
          UpdateExpression: 'SET #count = if_not_exists(#count, :zero) + :one, #holder = :now',
          ConditionExpression: '(attribute_not_exists(#count) OR #count < :limit) AND attribute_not_exists(#holder)',
          ExpressionAttributeNames: names,
          ExpressionAttributeValues: {
            ':zero': { N: '0' },
            ':one': { N: '1' },
            ':limit': { N: String(config.permits) },
            ':now': { N: String(Date.now()) },
          },
        }),
        { abortSignal: signal },
      );
      break;
    } catch (error) {
      if (!isRefused(error)) throw error;
      await sleep(config.settings.pollMs, undefined, { signal });
    }
  }
  return () =>
    dynamoDB.send(
      new UpdateItemCommand({
        TableName: config.counterTable,
        Key,
        UpdateExpression: 'SET #count = #count - :one REMOVE #holder',
        ConditionExpression: 'attribute_exists(#holder)',
        ExpressionAttributeNames: names,
        ExpressionAttributeValues: { ':one': { N: '1' } },
      }),
    );
}

// Warm up connections and the code path before the measured time; 32 processes starting on 2 cores may be too slow at first.
for (let attempt = 1; ; attempt++) {
  try {
    await (
      await take(AbortSignal.timeout(60_000))
    )();
    break;
  } catch (error) {
    if (attempt === 5) throw error;
    await sleep(1_000);
  }
}
report('ready');
await lineFromParent('go');

calls.reset();
const stop = AbortSignal.timeout(config.durationMs);
const waits: number[] = [];
const sections: Array<[number, number]> = [];
/** Calls that ended without a permit (a typed error, as a user would retry): counted, and the worker goes on. */
let failed = 0;
while (!stop.aborted) {
  const asked = performance.now();
  let giveBack: (() => Promise<unknown>) | undefined;
  try {
    giveBack = await unlessStopped(stop, () => take(stop));
  } catch {
    failed++;
    continue;
  }
  if (giveBack === undefined) break;
  waits.push(performance.now() - asked);
  const start = wallClock();
  await sleep(config.criticalMs);
  sections.push([start, wallClock()]);
  await giveBack();
}
report('done', { grants: sections.length, failed, waits, sections, calls: calls.total() });
process.exit(0);
