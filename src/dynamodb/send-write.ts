/** Sends the lock's writes: a {@link LockWriteRequest}, or a transaction that carries the lock's guard. */
import {
  DeleteItemCommand,
  PutItemCommand,
  TransactWriteItemsCommand,
  UpdateItemCommand,
  type DynamoDBClient,
  type TransactWriteItemsCommandInput,
} from '@aws-sdk/client-dynamodb';
import type { LockWriteRequest } from '../protocol/index.js';

/** Follows a command through the SDK's attempts: when it first left (departure.ts), what each attempt was answered (attempt-answers.ts). */
export interface CommandWatch {
  watch<Command extends { readonly input: object; readonly middlewareStack: object }>(command: Command, sender: object): Command;
}

/** Sends a {@link LockWriteRequest} with the SDK command that matches its operation; `watches` follow its attempts. */
export async function sendWrite(
  dynamoDB: Pick<DynamoDBClient, 'send'>,
  request: LockWriteRequest,
  signal?: AbortSignal,
  ...watches: readonly (CommandWatch | undefined)[]
): Promise<void> {
  // No options at all without a signal: the SDK's cacheMiddleware serves only calls without options.
  const options = signal === undefined ? undefined : { abortSignal: signal };
  const watched = <Command extends PutItemCommand | UpdateItemCommand | DeleteItemCommand>(command: Command): Command =>
    watchedBy(command, dynamoDB, watches);
  switch (request.operation) {
    case 'PutItem':
      await dynamoDB.send(watched(new PutItemCommand(request.input)), options);
      return;
    case 'UpdateItem':
      await dynamoDB.send(watched(new UpdateItemCommand(request.input)), options);
      return;
    case 'DeleteItem':
      await dynamoDB.send(watched(new DeleteItemCommand(request.input)), options);
      return;
  }
}

/** Sends one TransactWriteItems call. */
export async function sendTransaction(
  dynamoDB: Pick<DynamoDBClient, 'send'>,
  input: TransactWriteItemsCommandInput,
  signal?: AbortSignal,
): Promise<void> {
  await dynamoDB.send(new TransactWriteItemsCommand(input), { abortSignal: signal });
}

/** `command`, followed by each of `watches` through `sender`. */
function watchedBy<Command extends { readonly input: object; readonly middlewareStack: object }>(
  command: Command,
  sender: object,
  watches: readonly (CommandWatch | undefined)[],
): Command {
  for (const watch of watches) watch?.watch(command, sender);
  return command;
}
