/**
 * Helpers for integration tests that talk to the DynamoDB Local started by
 * jest's globalSetup (see global-setup.ts), which publishes its endpoint in
 * process.env.DYNAMODB_LOCAL_ENDPOINT.
 */
import { randomBytes } from 'node:crypto';
import { DynamoDBClient, type DynamoDBClientConfig } from '@aws-sdk/client-dynamodb';

export const ENDPOINT_ENV = 'DYNAMODB_LOCAL_ENDPOINT';

export function localEndpoint(): string {
  const endpoint = process.env[ENDPOINT_ENV];
  if (!endpoint) {
    throw new Error(
      `${ENDPOINT_ENV} is not set: DynamoDB Local is started by jest's globalSetup ` +
        '(integration/support/global-setup.ts); run integration tests through jest.',
    );
  }
  return endpoint;
}

/**
 * Client config for DynamoDB Local. Credentials and region are dummies (with
 * -sharedDb, DynamoDB Local ignores both). Overrides are applied last.
 *
 * Note: DynamoDB Local rejects an access key ID that is not purely [A-Za-z0-9]
 * with "UnrecognizedClientException: The Access Key ID or security token is
 * invalid" (e.g. 'AKID-a' or 'a_b' fail, 'AKIDa' works); secrets are free-form.
 */
export function localClientConfig(overrides: DynamoDBClientConfig = {}): DynamoDBClientConfig {
  return {
    endpoint: localEndpoint(),
    region: 'us-east-1',
    credentials: { accessKeyId: 'local', secretAccessKey: 'local' },
    // A few retries absorb a busy JVM; more would only hide real failures.
    maxAttempts: 3,
    requestHandler: { connectionTimeout: 2_000, requestTimeout: 10_000 },
    ...overrides,
  };
}

/** A new client for DynamoDB Local. Call `client.destroy()` when done. */
export function newLocalClient(overrides: DynamoDBClientConfig = {}): DynamoDBClient {
  return new DynamoDBClient(localClientConfig(overrides));
}

/**
 * A table name unique across parallel jest workers and repeated runs against
 * the same shared database: `<prefix>-<time36>-<random hex>`, valid for
 * DynamoDB (3-255 chars of [a-zA-Z0-9_.-]).
 */
export function uniqueTableName(prefix: string): string {
  const safePrefix = prefix.replace(/[^a-zA-Z0-9_.-]/g, '-').slice(0, 200) || 'test';
  return `${safePrefix}-${Date.now().toString(36)}-${randomBytes(4).toString('hex')}`;
}
