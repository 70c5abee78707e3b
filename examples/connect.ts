/**
 * How the examples reach DynamoDB: the standard AWS configuration
 * (AWS_REGION, credentials, AWS_ENDPOINT_URL_DYNAMODB for DynamoDB Local).
 * LOCK_TABLE names the lock table; it defaults to "locks".
 */
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { LockClient, type LockClientSettings } from 'dynamodb-lock';

export function lockClient(settings: Omit<LockClientSettings, 'tableName'> = {}): LockClient {
  return new LockClient({ dynamoDB: new DynamoDBClient({}), tableName: process.env['LOCK_TABLE'] ?? 'locks', ...settings });
}

/** Aborts on the first SIGTERM or SIGINT: the graceful-shutdown recipe of docs/graceful-shutdown.md. */
export function shutdownSignal(): AbortSignal {
  const shutdown = new AbortController();
  for (const signal of ['SIGTERM', 'SIGINT'] as const) {
    process.once(signal, () => shutdown.abort(new Error(`received ${signal}`)));
  }
  return shutdown.signal;
}
