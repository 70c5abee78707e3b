/**
 * Helpers for integration tests that talk to the DynamoDB Local started by
 * jest's globalSetup (see jest/global-setup.ts), which publishes its endpoint in
 * process.env.DYNAMODB_LOCAL_ENDPOINT.
 */
import { randomBytes } from 'node:crypto';
import { DynamoDBClient, GetItemCommand, type AttributeValue, type DynamoDBClientConfig } from '@aws-sdk/client-dynamodb';

/** An item as the SDK reads and writes it. */
export type Item = Record<string, AttributeValue>;

export const ENDPOINT_ENV = 'DYNAMODB_LOCAL_ENDPOINT';

export function localEndpoint(): string {
  const endpoint = process.env[ENDPOINT_ENV];
  if (!endpoint) {
    throw new Error(
      `${ENDPOINT_ENV} is not set: DynamoDB Local is started by jest's globalSetup ` +
        '(test-kit/jest/global-setup.ts); run integration tests through jest.',
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

/**
 * Dummy credentials of their own for `identity`, as separate processes would
 * have. DynamoDB Local accepts access key ids of letters and digits only.
 */
export function localCredentials(identity: string): { accessKeyId: string; secretAccessKey: string } {
  return { accessKeyId: `AKID${identity.replace(/[^A-Za-z0-9]/g, '')}`, secretAccessKey: `secret-${identity}` };
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

/** The item at `key`, read consistently; undefined when there is none. */
export async function readItem(dynamoDB: Pick<DynamoDBClient, 'send'>, tableName: string, key: Item): Promise<Item | undefined> {
  const output = await dynamoDB.send(new GetItemCommand({ TableName: tableName, Key: key, ConsistentRead: true }));
  return output.Item === undefined || Object.keys(output.Item).length === 0 ? undefined : output.Item;
}
