/**
 * The chaos run's last check: every item left in the lock table decodes
 * (getAllLocks does not throw MalformedLockItemError) and carries the
 * protocol attributes with the types PROTOCOL.md §2 gives them.
 */
import { DynamoDBClient, ScanCommand, type AttributeValue } from '@aws-sdk/client-dynamodb';
import { LockClient } from '../src/index.js';

export interface ScanReport {
  readonly items: number;
  /** One line per problem found; empty when every item is well-formed. */
  readonly malformed: string[];
}

const STRING_ATTRIBUTES = ['key', 'ownerName', 'leaseDuration', 'recordVersionNumber'] as const;

function problemsOf(item: Record<string, AttributeValue>): string[] {
  const problems: string[] = [];
  for (const name of STRING_ATTRIBUTES) {
    if (typeof item[name]?.S !== 'string') problems.push(`${name} is not a string (S)`);
  }
  const lease = item.leaseDuration?.S;
  if (lease !== undefined && !/^\d+$/.test(lease)) problems.push(`leaseDuration ${JSON.stringify(lease)} is not whole milliseconds`);
  if (item.data !== undefined && !(item.data.B instanceof Uint8Array)) problems.push('data is not binary (B)');
  return problems;
}

export async function scanLockTable(endpoint: string, tableName: string): Promise<ScanReport> {
  const dynamoDB = new DynamoDBClient({
    endpoint,
    region: 'us-east-1',
    credentials: { accessKeyId: 'chaosscan', secretAccessKey: 'chaos' },
  });
  const client = new LockClient({ dynamoDB, tableName, backgroundHeartbeats: false });
  const malformed: string[] = [];
  let items = 0;
  try {
    try {
      for await (const snapshot of client.getAllLocks()) void snapshot;
    } catch (error) {
      malformed.push(`getAllLocks threw ${(error as Error).name}: ${(error as Error).message}`);
    }
    let start: Record<string, AttributeValue> | undefined;
    do {
      const page = await dynamoDB.send(new ScanCommand({ TableName: tableName, ConsistentRead: true, ExclusiveStartKey: start }));
      for (const item of page.Items ?? []) {
        items++;
        for (const problem of problemsOf(item)) malformed.push(`${JSON.stringify(item.key?.S)}: ${problem}`);
      }
      start = page.LastEvaluatedKey;
    } while (start !== undefined);
  } finally {
    await client.close().catch(() => undefined);
    dynamoDB.destroy();
  }
  return { items, malformed };
}
