/**
 * Warms a fresh DynamoDB Local before the tests time anything against it.
 * Its JVM answers the first requests of each kind (a table's creation, a
 * conditional write, a consistent read, a transaction, a PartiQL batch) many
 * times slower than later ones, until it has compiled their paths; a test of
 * a 1 s lease that happens to send the first of them waits out its request
 * bound on a server that is only cold. Sending each kind a few hundred times
 * first gives every test the server they were written against.
 */
import {
  BatchExecuteStatementCommand,
  DeleteItemCommand,
  DeleteTableCommand,
  DynamoDBClient,
  GetItemCommand,
  PutItemCommand,
  QueryCommand,
  TransactWriteItemsCommand,
  UpdateItemCommand,
  type DynamoDBClientConfig,
} from '@aws-sdk/client-dynamodb';
import { createIdKeyedTable } from './data-table.js';

/** Rounds of every kind of request, each round this many at once. */
const ROUNDS = 10;
const AT_ONCE = 8;

export async function warmUp(config: DynamoDBClientConfig): Promise<void> {
  const client = new DynamoDBClient(config);
  const TableName = `warm-up-${process.pid}-${Date.now()}`;
  try {
    await createIdKeyedTable(client, TableName);
    for (let round = 0; round < ROUNDS; round++) {
      await Promise.all(Array.from({ length: AT_ONCE }, (_, i) => oneOfEach(client, TableName, `${round}-${i}`)));
    }
    await client.send(new DeleteTableCommand({ TableName }));
  } finally {
    client.destroy();
  }
}

/** One request of each kind the lock client sends, on items of its own. */
async function oneOfEach(client: DynamoDBClient, TableName: string, id: string): Promise<void> {
  const key = { id: { S: id } };
  await client.send(
    new PutItemCommand({
      TableName,
      Item: { ...key, rvn: { S: 'a' } },
      ConditionExpression: 'attribute_not_exists(#k)',
      ExpressionAttributeNames: { '#k': 'id' },
    }),
  );
  await client.send(
    new UpdateItemCommand({
      TableName,
      Key: key,
      UpdateExpression: 'SET rvn = :new',
      ConditionExpression: 'rvn = :old',
      ExpressionAttributeValues: { ':new': { S: 'b' }, ':old': { S: 'a' } },
      ReturnValuesOnConditionCheckFailure: 'ALL_OLD',
    }),
  );
  await client.send(new GetItemCommand({ TableName, Key: key, ConsistentRead: true }));
  await client.send(
    new BatchExecuteStatementCommand({
      Statements: [
        { Statement: `UPDATE "${TableName}" SET rvn = ? WHERE "id" = ? AND rvn = ?`, Parameters: [{ S: 'c' }, { S: id }, { S: 'b' }] },
      ],
    }),
  );
  await client.send(
    new TransactWriteItemsCommand({
      TransactItems: [
        {
          Put: {
            TableName,
            Item: { id: { S: `${id}-t` }, rvn: { S: 'a' } },
            ConditionExpression: 'attribute_not_exists(#k)',
            ExpressionAttributeNames: { '#k': 'id' },
          },
        },
      ],
    }),
  );
  await client.send(
    new QueryCommand({
      TableName,
      KeyConditionExpression: '#k = :k',
      ExpressionAttributeNames: { '#k': 'id' },
      ExpressionAttributeValues: { ':k': { S: id } },
      ConsistentRead: true,
    }),
  );
  await client.send(
    new DeleteItemCommand({ TableName, Key: key, ConditionExpression: 'rvn = :c', ExpressionAttributeValues: { ':c': { S: 'c' } } }),
  );
}
