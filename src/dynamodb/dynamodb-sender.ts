/**
 * The one thing the lock client needs of a DynamoDB client: `send`.
 *
 * The option is typed by shape, not as `DynamoDBClient`, so that a client of
 * any AWS SDK v3 version the package supports type-checks, also when a
 * second copy of the SDK sits somewhere in the application's tree: the
 * SDK's own `send` types name its private middleware types, which differ
 * between any two copies.
 */
import type { DynamoDBClient } from '@aws-sdk/client-dynamodb';

/** Anything with the `send` of an AWS SDK v3 `DynamoDBClient`, such as the client itself. */
export interface DynamoDBSender {
  send(command: object, options?: { readonly abortSignal?: AbortSignal }): Promise<unknown>;
}

/**
 * The same object, seen through the SDK's types. Sound because the commands
 * the lock client sends come from the `@aws-sdk/client-dynamodb` it imports,
 * which is the application's own copy (a peer dependency).
 */
export function sdkClientOf(sender: DynamoDBSender): Pick<DynamoDBClient, 'send'> {
  return sender as Pick<DynamoDBClient, 'send'>;
}
