/**
 * The verdict of a `--fenced` chaos run: what the workers' counter writes
 * did (from their log) and how many updates were lost (from the final state
 * of the counter items, which no log can miss: a write of unknown outcome,
 * or one by a worker killed before it could log, still shows there).
 */
import { DynamoDBClient, ScanCommand, type AttributeValue } from '@aws-sdk/client-dynamodb';
import { createIdKeyedTable } from '../test-kit/data-table.js';
import type { ChaosEvent, WriteOutcome } from './events.js';

export interface FencedReport {
  /** Counter writes the workers sent (every outcome but `refusedLocally`, which never left the process). */
  readonly guardedWrites: number;
  /** Writes the lock's check made DynamoDB refuse: the lock had moved while the writer was not looking. */
  readonly refusedWrites: number;
  /** Σ (w − n) over the counter items: increments two writers made from the same value. Must be 0. */
  readonly lostUpdates: number;
  /** Late writes (sent after a stall past the lease), and how many of them DynamoDB refused. */
  readonly lateWrites: number;
  readonly lateRefused: number;
  /** Writes by outcome, from the workers' log. */
  readonly outcomes: Record<WriteOutcome, number>;
  /** Σ w: the writes the table says were applied. */
  readonly appliedWrites: number;
  /** Counter items whose `n` or `w` is not a whole number ≥ 0, or whose `n` exceeds `w`. */
  readonly malformedCounters: string[];
  /** The fencing tokens the counter items hold at the end (guarded runs), by key: the last hold that wrote each. */
  readonly fencingTokens: Record<string, string>;
}

function dynamoDBAt(endpoint: string): DynamoDBClient {
  return new DynamoDBClient({ endpoint, region: 'us-east-1', credentials: { accessKeyId: 'chaosdata', secretAccessKey: 'chaos' } });
}

/** The data table: one counter item per lock key, keyed by `id`. */
export async function createCounterTable(endpoint: string, tableName: string): Promise<void> {
  const dynamoDB = dynamoDBAt(endpoint);
  try {
    await createIdKeyedTable(dynamoDB, tableName);
  } finally {
    dynamoDB.destroy();
  }
}

/** Reads every counter item (consistently) and judges it. */
export async function scanCounters(
  endpoint: string,
  tableName: string,
): Promise<Pick<FencedReport, 'lostUpdates' | 'appliedWrites' | 'malformedCounters' | 'fencingTokens'>> {
  const dynamoDB = dynamoDBAt(endpoint);
  const items: Record<string, AttributeValue>[] = [];
  try {
    let start: Record<string, AttributeValue> | undefined;
    do {
      const page = await dynamoDB.send(new ScanCommand({ TableName: tableName, ConsistentRead: true, ExclusiveStartKey: start }));
      items.push(...(page.Items ?? []));
      start = page.LastEvaluatedKey;
    } while (start !== undefined);
  } finally {
    dynamoDB.destroy();
  }
  return judgeCounters(items);
}

/** `w − n` summed over the items; pure, so that it can be shown to count what it claims. */
export function judgeCounters(
  items: readonly Record<string, AttributeValue>[],
): Pick<FencedReport, 'lostUpdates' | 'appliedWrites' | 'malformedCounters' | 'fencingTokens'> {
  let lostUpdates = 0;
  let appliedWrites = 0;
  const malformedCounters: string[] = [];
  const fencingTokens: Record<string, string> = {};
  for (const item of items) {
    const token = item['fencingToken']?.N;
    if (token !== undefined) fencingTokens[item['id']?.S ?? '?'] = token;
    const n = Number(item['n']?.N);
    const w = Number(item['w']?.N);
    if (!Number.isSafeInteger(n) || !Number.isSafeInteger(w) || n < 0 || n > w) {
      malformedCounters.push(`${JSON.stringify(item['id']?.S)}: n ${item['n']?.N}, w ${item['w']?.N}`);
      continue;
    }
    lostUpdates += w - n;
    appliedWrites += w;
  }
  return { lostUpdates, appliedWrites, malformedCounters, fencingTokens };
}

/** What the workers' log says about their counter writes. */
export function summarizeWrites(
  events: readonly ChaosEvent[],
): Pick<FencedReport, 'guardedWrites' | 'refusedWrites' | 'lateWrites' | 'lateRefused' | 'outcomes'> {
  const outcomes: Record<WriteOutcome, number> = {
    committed: 0,
    refused: 0,
    refusedLocally: 0,
    canceled: 0,
    fencedOut: 0,
    unknown: 0,
    failed: 0,
  };
  let lateWrites = 0;
  let lateRefused = 0;
  for (const event of events) {
    if (event.type !== 'write') continue;
    outcomes[event.outcome]++;
    if (!event.late || event.outcome === 'refusedLocally') continue;
    lateWrites++;
    if (event.outcome === 'refused') lateRefused++;
  }
  const sent = Object.values(outcomes).reduce((a, b) => a + b, 0) - outcomes.refusedLocally;
  return { guardedWrites: sent, refusedWrites: outcomes.refused, lateWrites, lateRefused, outcomes };
}
