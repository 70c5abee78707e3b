/**
 * dynamodb-lock-client (npm, the most used Node DynamoDB lock library) on the
 * AWS SDK v3. It expects an SDK v2 DocumentClient: `get`/`put`/`delete` with
 * callbacks, and errors carrying `code`. lib-dynamodb's DynamoDBDocument
 * speaks the same document shapes; SDK v3 errors name themselves in `name`,
 * so it is copied to `code`, which the library tests for
 * ConditionalCheckFailedException.
 */
import type { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { DynamoDBDocument } from '@aws-sdk/lib-dynamodb';
import { createRequire } from 'node:module';

type Callback = (error: unknown, data?: unknown) => void;

export interface V2StyleDocumentClient {
  get(params: object, callback: Callback): void;
  put(params: object, callback: Callback): void;
  delete(params: object, callback: Callback): void;
}

export function v2StyleDocumentClient(dynamoDB: DynamoDBClient): V2StyleDocumentClient {
  const doc = DynamoDBDocument.from(dynamoDB);
  const settle = (call: Promise<unknown>, callback: Callback): void => {
    call.then(
      (data) => callback(null, data),
      (error: unknown) => {
        if (error instanceof Error && !('code' in error)) Object.assign(error, { code: error.name });
        callback(error);
      },
    );
  };
  return {
    get: (params, callback) => settle(doc.get(params as Parameters<typeof doc.get>[0]), callback),
    put: (params, callback) => settle(doc.put(params as Parameters<typeof doc.put>[0]), callback),
    delete: (params, callback) => settle(doc.delete(params as Parameters<typeof doc.delete>[0]), callback),
  };
}

/** The library's lock handle: an EventEmitter that reports failed heartbeats as 'error'. */
export interface FailOpenLock {
  readonly fencingToken: number;
  release(callback: (error?: Error) => void): void;
  on(event: 'error', listener: (error: unknown) => void): void;
}

export interface FailOpenClient {
  acquireLock(id: string, callback: (error: unknown, lock?: FailOpenLock) => void): void;
}

export interface FailOpenConfig {
  readonly dynamodb: V2StyleDocumentClient;
  readonly lockTable: string;
  readonly partitionKey: string;
  readonly leaseDurationMs: number;
  readonly heartbeatPeriodMs: number;
  readonly retryCount: number;
  readonly owner?: string;
}

/** The library is CommonJS without types. */
const library = createRequire(import.meta.url)('dynamodb-lock-client') as {
  FailOpen: new (config: FailOpenConfig) => FailOpenClient;
};

export const FailOpen = library.FailOpen;
