/**
 * A table for the data a lock protects (keyed by `id`), beside the lock
 * table of a test: what guarded writes write to.
 */
import { CreateTableCommand, type DynamoDBClient, type TransactWriteItem } from '@aws-sdk/client-dynamodb';
import { readItem, uniqueTableName, type Item } from './aws.js';

/** Creates an on-demand table with a unique name from `prefix` and partition key `id` (S); DynamoDB Local makes it ACTIVE at once. */
export async function createDataTable(dynamoDB: Pick<DynamoDBClient, 'send'>, prefix: string): Promise<string> {
  const tableName = uniqueTableName(prefix);
  await createIdKeyedTable(dynamoDB, tableName);
  return tableName;
}

/** Creates the on-demand table `tableName` with partition key `id` (S). */
export async function createIdKeyedTable(dynamoDB: Pick<DynamoDBClient, 'send'>, tableName: string): Promise<void> {
  await dynamoDB.send(
    new CreateTableCommand({
      TableName: tableName,
      KeySchema: [{ AttributeName: 'id', KeyType: 'HASH' }],
      AttributeDefinitions: [{ AttributeName: 'id', AttributeType: 'S' }],
      BillingMode: 'PAY_PER_REQUEST',
    }),
  );
}

/** The item with this `id`, read consistently; undefined when there is none. */
export async function dataItem(dynamoDB: Pick<DynamoDBClient, 'send'>, tableName: string, id: string): Promise<Item | undefined> {
  return readItem(dynamoDB, tableName, { id: { S: id } });
}

/** A write that adds 1 to the number `n` of the item with this `id` (creating either if missing). */
export function increment(tableName: string, id: string): TransactWriteItem {
  return {
    Update: {
      TableName: tableName,
      Key: { id: { S: id } },
      UpdateExpression: 'ADD #n :one',
      ExpressionAttributeNames: { '#n': 'n' },
      ExpressionAttributeValues: { ':one': { N: '1' } },
    },
  };
}
