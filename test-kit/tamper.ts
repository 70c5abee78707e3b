/**
 * What other clients do to a lock behind its holder's back, written raw to
 * the table: another holder's item, a Java-style takeover, a deletion,
 * marking it released.
 */
import { DeleteItemCommand, PutItemCommand, UpdateItemCommand } from '@aws-sdk/client-dynamodb';
import { randomUUID } from 'node:crypto';
import type { LockTestBed } from './test-locks.js';

/**
 * Writes the item another holder writes when it acquires `partitionKey`, as
 * the Java client writes it, over whatever is there: a holder that died
 * without releasing, a takeover, a Java host in an election.
 * @returns its RVN (`rvn` if given, else a new one).
 */
export async function putForeignLock(
  bed: LockTestBed,
  partitionKey: string,
  ownerName: string,
  { leaseMs = 20_000, data, rvn = randomUUID() }: { leaseMs?: number; data?: string; rvn?: string } = {},
): Promise<string> {
  await bed.raw.send(
    new PutItemCommand({
      TableName: bed.tableName,
      Item: {
        ...bed.key(partitionKey),
        ownerName: { S: ownerName },
        leaseDuration: { S: String(leaseMs) },
        recordVersionNumber: { S: rvn },
        ...(data === undefined ? {} : { data: { B: new TextEncoder().encode(data) } }),
      },
    }),
  );
  return rvn;
}

/**
 * Replaces the item with one owned by `thief`, as a Java takeover does: a
 * PutItem conditioned on the RVN just read. A heartbeat may change the RVN
 * between the read and the write, so it reads and tries again until it wins.
 * @returns the thief's RVN.
 */
export async function stealLock(bed: LockTestBed, partitionKey: string, thief: string): Promise<string> {
  const rvn = randomUUID();
  for (let attempt = 1; ; attempt++) {
    const seen = await bed.rvn(partitionKey);
    if (seen === undefined) throw new Error(`nothing to steal: ${partitionKey} has no item`);
    try {
      await bed.raw.send(
        new PutItemCommand({
          TableName: bed.tableName,
          Item: {
            ...bed.key(partitionKey),
            ownerName: { S: thief },
            leaseDuration: { S: '60000' },
            recordVersionNumber: { S: rvn },
          },
          ConditionExpression: 'attribute_exists(#pk) AND #rvn = :rvn',
          ExpressionAttributeNames: { '#pk': bed.partitionKeyName, '#rvn': 'recordVersionNumber' },
          ExpressionAttributeValues: { ':rvn': { S: seen } },
        }),
      );
      return rvn;
    } catch (error) {
      if ((error as Error).name !== 'ConditionalCheckFailedException' || attempt >= 20) throw error;
    }
  }
}

export async function deleteLockItem(bed: LockTestBed, partitionKey: string): Promise<void> {
  await bed.raw.send(new DeleteItemCommand({ TableName: bed.tableName, Key: bed.key(partitionKey) }));
}

/** Marks the item released without changing its owner or RVN, as an operator's tool might. */
export async function markReleased(bed: LockTestBed, partitionKey: string): Promise<void> {
  await bed.raw.send(
    new UpdateItemCommand({
      TableName: bed.tableName,
      Key: bed.key(partitionKey),
      UpdateExpression: 'SET isReleased = :one',
      ExpressionAttributeValues: { ':one': { S: '1' } },
    }),
  );
}
