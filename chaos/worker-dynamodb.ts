/**
 * The DynamoDB client of a chaos worker: the one README tells users to build
 * (`new DynamoDBClient({...})` with the SDK's own retries and timeouts), with
 * only what the run varies: `maxAttempts`, `retryMode`, and the access key id
 * the fault schedule reads to tell which worker sent a request.
 */
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';

export type RetryMode = 'standard' | 'adaptive';

export interface WorkerDynamoDBSettings {
  readonly endpoint: string;
  /** The SDK's `maxAttempts`; none for the SDK's own default. */
  readonly maxAttempts: number | undefined;
  /** The SDK's `retryMode`; none for the SDK's own default (standard). */
  readonly retryMode: RetryMode | undefined;
}

export function workerDynamoDB(settings: WorkerDynamoDBSettings, accessKeyId = 'chaos'): DynamoDBClient {
  return new DynamoDBClient({
    endpoint: settings.endpoint,
    region: 'us-east-1',
    credentials: { accessKeyId, secretAccessKey: 'chaos' },
    ...(settings.maxAttempts === undefined ? {} : { maxAttempts: settings.maxAttempts }),
    ...(settings.retryMode === undefined ? {} : { retryMode: settings.retryMode }),
  });
}
