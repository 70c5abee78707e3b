/**
 * The user's DynamoDB client (a `DynamoDBSender`, typed by shape in
 * settings/options.ts), as the SDK client the requests of dynamodb/ go through.
 */
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { InvalidArgumentError } from '../base/errors.js';
import type { DynamoDBClientSource, DynamoDBSender } from '../settings/options.js';

/**
 * The same object, seen through the SDK's types. Sound because the commands
 * the lock client sends come from the `@aws-sdk/client-dynamodb` it imports,
 * which is the application's own copy (a peer dependency).
 */
export function sdkClientOf(sender: DynamoDBSender): Pick<DynamoDBClient, 'send'> {
  return sender as Pick<DynamoDBClient, 'send'>;
}

/** The client a lock client sends with: the user's, or one made from `dynamoDBConfig` (`owned`: the lock client destroys it on close). */
export function senderOfSource(source: DynamoDBClientSource): { dynamoDB: Pick<DynamoDBClient, 'send'>; owned: DynamoDBClient | undefined } {
  if (source.dynamoDB !== undefined) return { dynamoDB: sdkClientOf(source.dynamoDB), owned: undefined };
  if (source.dynamoDBConfig !== undefined) {
    const owned = new DynamoDBClient(source.dynamoDBConfig);
    return { dynamoDB: owned, owned };
  }
  throw new InvalidArgumentError('INVALID_OPTION', 'Pass either dynamoDB (a DynamoDBClient) or dynamoDBConfig');
}
