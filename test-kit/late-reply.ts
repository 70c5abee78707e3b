/**
 * A reply that comes late although DynamoDB applied the request at once: a
 * socket queue or a busy client, as seen from the lock client. A middleware
 * on the client's own stack holds the reply back after it arrived.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import type { DynamoDBClient } from '@aws-sdk/client-dynamodb';

/** Holds the reply of the client's next `commandName` (e.g. `PutItemCommand`) for `ms` after DynamoDB applied it. */
export function holdNextReply(dynamoDB: DynamoDBClient, commandName: string, ms: number): { readonly held: () => boolean } {
  let held = false;
  dynamoDB.middlewareStack.add(
    (next, context) => async (args) => {
      const result = await next(args);
      if (!held && context.commandName === commandName) {
        held = true;
        await sleep(ms);
      }
      return result;
    },
    { step: 'deserialize', name: `lateReply${commandName}` },
  );
  return { held: () => held };
}
