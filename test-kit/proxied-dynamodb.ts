/**
 * A DynamoDB client that reaches DynamoDB Local through a {@link FaultProxy}.
 * By default configured so that injected faults surface quickly: no SDK
 * retries (the lock client's own retries are under test) and short timeouts.
 * With `sdkDefaults` it is the client README tells users to build: the SDK's
 * standard retries (4 attempts for DynamoDB) and its own timeouts.
 */
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { localCredentials, localEndpoint, newLocalClient } from './aws.js';
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
  /** The SDK's own retry and timeout settings, as `new DynamoDBClient({})` has them; `requestTimeout` is then ignored. @default false */
  readonly sdkDefaults?: boolean;
  /** With `sdkDefaults`: the SDK's retry settings. @default the SDK's own */
  readonly retries?: { readonly maxAttempts?: number; readonly retryMode?: 'standard' | 'adaptive' };
}

export async function proxiedDynamoDB(identity: string, options: ProxiedDynamoDBOptions = {}): Promise<ProxiedDynamoDB> {
  const proxy = await FaultProxy.start(localEndpoint());
  const credentials = localCredentials(identity);
  const dynamoDB = options.sdkDefaults
    ? new DynamoDBClient({ endpoint: proxy.endpoint, region: 'us-east-1', credentials, ...options.retries })
    : newLocalClient({
        endpoint: proxy.endpoint,
        credentials,
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
