/**
 * One worker process of `npm run bench -- semaphore`: for a fixed time after
 * the parent says "go", takes one permit of the semaphore, runs a short
 * section, and gives the permit back, over and over. `permits` takes a
 * permit of this library's semaphore (`acquirePermit`); `counter` takes one
 * the way the AWS Step Functions sample "DDB semaphore concurrency control"
 * does, with one counter item: an UpdateItem that adds one to the count
 * and this holder's attribute while the count is below N, retried every poll
 * period while it is refused, and an UpdateItem that takes them off again.
 * Both updates also count the item's changes (which the sample does not),
 * so that the parent can put grants and releases in the order they applied.
 * Reports grants, their waits, the DynamoDB calls, and each section on the
 * shared wall clock (for the parent's check that at most N ran at once, and
 * its hand-over times) with the permit it held or the counter's changes that
 * let it in and out.
 *
 * Usage: semaphore-worker.ts <json: SemaphoreWorkerConfig>
 */
import { UpdateItemCommand, type UpdateItemCommandOutput } from '@aws-sdk/client-dynamodb';
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

/** The counter item after one of its updates. */
export interface ItemChange {
  /** The item's change number: updates applied in its order. */
  readonly change: number;
  /** Places taken. */
  readonly count: number;
}

/** A section on the shared wall clock, and what let it run. */
export interface SemaphoreSection {
  readonly start: number;
  readonly end: number;
  /** `permits`: the partition key of the permit it held. */
  readonly permit?: string;
  /** `counter`: the increment that granted its place. */
  readonly granted?: ItemChange;
  /** `counter`: the decrement that gave its place back. */
  readonly released?: ItemChange;
}

/** A permit taken: which one, or the counter's change that granted it, and how to give it back. */
interface Grant {
  readonly permit?: string;
  readonly granted?: ItemChange;
  giveBack(): Promise<ItemChange | undefined>;
}

const config = JSON.parse(process.argv[2] ?? '') as SemaphoreWorkerConfig;
const { dynamoDB, calls, client } = ourLockClient(config.endpoint, config.settings, config.name);
const wallClock = (): number => performance.timeOrigin + performance.now();
const isRefused = (error: unknown): boolean => (error as { name?: string }).name === 'ConditionalCheckFailedException';
const itemChange = ({ Attributes }: UpdateItemCommandOutput): ItemChange => ({
  change: Number(Attributes?.['changeNumber']?.N),
  count: Number(Attributes?.['currentlockcount']?.N),
});

async function take(signal: AbortSignal): Promise<Grant> {
  if (config.method === 'permits') {
    const permit = await client.acquirePermit(config.semaphore, {
      permits: config.permits,
      refreshPeriod: config.settings.pollMs,
      additionalTimeToWaitForLock: Infinity,
      signal,
    });
    const giveBack = async (): Promise<undefined> => {
      await permit.release();
    };
    return { permit: permit.partitionKey, giveBack };
  }
  const Key = { id: { S: config.semaphore } };
  const names = { '#count': 'currentlockcount', '#holder': config.name, '#change': 'changeNumber' };
  for (;;) {
    try {
      const granted = await dynamoDB.send(
        new UpdateItemCommand({
          TableName: config.counterTable,
          Key,
          UpdateExpression: 'SET #count = if_not_exists(#count, :zero) + :one, #holder = :now, #change = if_not_exists(#change, :zero) + :one',
          ConditionExpression: '(attribute_not_exists(#count) OR #count < :limit) AND attribute_not_exists(#holder)',
          ExpressionAttributeNames: names,
          ExpressionAttributeValues: {
            ':zero': { N: '0' },
            ':one': { N: '1' },
            ':limit': { N: String(config.permits) },
            ':now': { N: String(Date.now()) },
          },
          ReturnValues: 'UPDATED_NEW',
        }),
        { abortSignal: signal },
      );
      return { granted: itemChange(granted), giveBack: async () => itemChange(await dynamoDB.send(release(Key, names))) };
    } catch (error) {
      if (!isRefused(error)) throw error;
      await sleep(config.settings.pollMs, undefined, { signal });
    }
  }
}

function release(Key: UpdateItemCommand['input']['Key'], names: Record<string, string>): UpdateItemCommand {
  return new UpdateItemCommand({
    TableName: config.counterTable,
    Key,
    UpdateExpression: 'SET #count = #count - :one, #change = #change + :one REMOVE #holder',
    ConditionExpression: 'attribute_exists(#holder)',
    ExpressionAttributeNames: names,
    ExpressionAttributeValues: { ':one': { N: '1' } },
    ReturnValues: 'UPDATED_NEW',
  });
}

// Warm up connections and the code path before the measured time; 32 processes starting on 2 cores may be too slow at first.
for (let attempt = 1; ; attempt++) {
  try {
    await (await take(AbortSignal.timeout(60_000))).giveBack();
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
const sections: SemaphoreSection[] = [];
/** Calls that ended without a permit (a typed error, as a user would retry): counted, and the worker goes on. */
let failed = 0;
while (!stop.aborted) {
  const asked = performance.now();
  let grant: Grant | undefined;
  try {
    grant = await unlessStopped(stop, () => take(stop));
  } catch {
    failed++;
    continue;
  }
  if (grant === undefined) break;
  waits.push(performance.now() - asked);
  const start = wallClock();
  await sleep(config.criticalMs);
  const end = wallClock();
  const { permit, granted } = grant;
  sections.push({ start, end, permit, granted, released: await grant.giveBack() });
}
report('done', { grants: sections.length, failed, waits, sections, calls: calls.total() });
process.exit(0);
