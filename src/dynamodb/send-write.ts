/** Sends a {@link LockWriteRequest} with the SDK command that matches its operation. */
import {
  DeleteItemCommand,
  PutItemCommand,
  UpdateItemCommand,
  type DynamoDBClient,
} from '@aws-sdk/client-dynamodb';
import type { LockWriteRequest } from '../protocol/index.js';

export async function sendWrite(
  dynamoDB: Pick<DynamoDBClient, 'send'>,
  request: LockWriteRequest,
  signal?: AbortSignal,
): Promise<void> {
  const options = { abortSignal: signal };
  switch (request.operation) {
    case 'PutItem':
      await dynamoDB.send(new PutItemCommand(request.input), options);
      return;
    case 'UpdateItem':
      await dynamoDB.send(new UpdateItemCommand(request.input), options);
      return;
    case 'DeleteItem':
      await dynamoDB.send(new DeleteItemCommand(request.input), options);
      return;
  }
}

