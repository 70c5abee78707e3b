/**
 * A DynamoDB client that reaches DynamoDB Local through a {@link FaultProxy},
 * configured so that injected faults surface quickly: no SDK retries (the
 * lock client's own retries are under test) and short timeouts.
 */
import type { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { newLocalClient, localEndpoint } from './aws.js';
import { FaultProxy } from './fault-proxy.js';

export interface ProxiedDynamoDB {
  readonly proxy: FaultProxy;
  readonly dynamoDB: DynamoDBClient;
  /** Destroys the client and closes the proxy. Never throws. */
  dispose(): Promise<void>;
}

export interface ProxiedDynamoDBOptions {
  /**
   * Milliseconds a request may go without an answer before the SDK gives up;
   * 0 for none, the SDK's default, which leaves the lock client's own deadlines. @default 500
   */
  readonly requestTimeout?: number;
}

export async function proxiedDynamoDB(identity: string, options: ProxiedDynamoDBOptions = {}): Promise<ProxiedDynamoDB> {
  const proxy = await FaultProxy.start(localEndpoint());
  // DynamoDB Local accepts access key ids of letters and digits only.
  const accessKeyId = `AKID${identity.replace(/[^A-Za-z0-9]/g, '')}`;
  const dynamoDB = newLocalClient({
    endpoint: proxy.endpoint,
    credentials: { accessKeyId, secretAccessKey: `secret-${identity}` },
    maxAttempts: 1,
    // Without throwOnRequestTimeout the SDK only logs a warning when requestTimeout passes.
    requestHandler: { connectionTimeout: 300, requestTimeout: options.requestTimeout ?? 500, throwOnRequestTimeout: true },
  });
  return {
    proxy,
    dynamoDB,
    dispose: async () => {
      dynamoDB.destroy();
      await proxy.close();
    },
  };
}
