/**
 * The user's DynamoDB client (a `DynamoDBSender`, typed by shape in
 * settings/options.ts), as the SDK client the requests of dynamodb/ go through.
 */
import type { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import type { DynamoDBSender } from '../settings/options.js';

/**
 * The same object, seen through the SDK's types. Sound because the commands
 * the lock client sends come from the `@aws-sdk/client-dynamodb` it imports,
 * which is the application's own copy (a peer dependency).
 */
export function sdkClientOf(sender: DynamoDBSender): Pick<DynamoDBClient, 'send'> {
  return sender as Pick<DynamoDBClient, 'send'>;
}
