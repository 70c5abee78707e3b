// Type-checked against the packed package by integration/package.test.ts:
// the ways README tells users to build the client must compile.
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { pino } from 'pino';
import { LockClient, type Lock } from 'dynamodb-lock';
import { LockClientInstrumentation } from 'dynamodb-lock/opentelemetry';
import { startDynamoDBLocal } from 'dynamodb-lock/testing';

const dynamoDB = new DynamoDBClient({});
export const withConsole = new LockClient({ dynamoDB, tableName: 'locks', logger: console });
export const withPino = new LockClient({ dynamoDB, tableName: 'locks', logger: pino() });
const telemetry = new LockClientInstrumentation();
export const instrumented = new LockClient({ dynamoDB: telemetry.wrapDynamoDB(dynamoDB), tableName: 'locks' });
export const instrumentation = telemetry.instrument(instrumented);
export const withConfig = new LockClient({ dynamoDBConfig: { region: 'eu-west-1' }, tableName: 'locks' });

export async function scoped(): Promise<void> {
  await using lock = await withConsole.acquireLock('key');
  const held: Lock = lock;
  held.throwIfLost();
}

export async function local(): Promise<void> {
  await using ddb = await startDynamoDBLocal({ tableName: 'locks' });
  const client = new LockClient({ dynamoDBConfig: ddb.clientConfig, tableName: 'locks' });
  await client.close();
}
