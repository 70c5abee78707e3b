/**
 * What other clients do to a lock behind its holder's back, written raw to
 * the table: a Java-style takeover, a deletion, marking it released.
 */
import { DeleteItemCommand, PutItemCommand, UpdateItemCommand } from '@aws-sdk/client-dynamodb';
import { randomUUID } from 'node:crypto';
import type { LockTestBed } from './test-locks.js';

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
