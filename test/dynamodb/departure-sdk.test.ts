/**
 * Departure through a real SDK client (canned request handler): the
 * middleware on the client's stack sees the command's own input on every
 * attempt, and a stack shared by several senders (a DynamoDBDocumentClient
 * and the DynamoDBClient it wraps) carries it once.
 */
import { describe, expect, it } from '@jest/globals';
import { DynamoDBClient, PutItemCommand } from '@aws-sdk/client-dynamodb';
import { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { Departure } from '../../src/dynamodb/departure.js';
import { sendWrite } from '../../src/dynamodb/send-write.js';

function cannedClient(statuses: number[]) {
  let calls = 0;
  const requestHandler = {
    handle: async () => {
      const statusCode = statuses[Math.min(calls, statuses.length - 1)] ?? 200;
      calls += 1;
      const { Readable } = await import('node:stream');
      const body = statusCode === 200 ? '{}' : '{"__type":"com.amazon.coral.service#InternalServerError","message":"x"}';
      return { response: { statusCode, headers: { 'content-type': 'application/x-amz-json-1.0' }, body: Readable.from([Buffer.from(body)]) } };
    },
  };
  const client = new DynamoDBClient({
    region: 'us-east-1',
    endpoint: 'http://localhost:1',
    credentials: { accessKeyId: 'a', secretAccessKey: 'b' },
    maxAttempts: 3,
    requestHandler: requestHandler as never,
  });
  return { client, calls: () => calls };
}

function clockAt() {
  const clock = { mono: 100, now: () => clock.mono, wallNow: () => 1_764_000_000_000 + clock.mono };
  return clock;
}

describe('Departure through the SDK', () => {
  it("the client's middleware finds the command by its input, and the first attempt's moment is kept across retries", async () => {
    const { client, calls } = cannedClient([500, 200]);
    const clock = clockAt();
    const seen: unknown[] = [];
    const command = new PutItemCommand({ TableName: 't', Item: { k: { S: 'x' } } });
    const departure = new Departure(clock);
    departure.watch(command, client);
    client.middlewareStack.add(
      (next) => async (args) => {
        seen.push((args as { input: unknown }).input);
        clock.mono += 1_000;
        return next(args);
      },
      { step: 'finalizeRequest', priority: 'low', name: 'probe' },
    );
    clock.mono += 5; // held before the first attempt
    await client.send(command);
    expect(calls()).toBe(2);
    expect(seen.every((input) => input === command.input)).toBe(true);
    expect(departure.lookup().lookupTime).toBe(1_105);
  });

  it('a DynamoDBDocumentClient and the DynamoDBClient it wraps (one stack) both take acquisition writes', async () => {
    const { client } = cannedClient([200]);
    const documentClient = DynamoDBDocumentClient.from(client);
    const request = { operation: 'PutItem', input: { TableName: 't', Item: { k: { S: 'x' } } } } as const;
    const clock = clockAt();
    await sendWrite(documentClient, request, undefined, new Departure(clock));
    await expect(sendWrite(client, request as never, undefined, new Departure(clock))).resolves.toBeUndefined();
    await expect(sendWrite(DynamoDBDocumentClient.from(client), request as never, undefined, new Departure(clock))).resolves.toBeUndefined();
  });

  it("a client whose stack copied another's, departure middleware included, still takes acquisition writes and notes their departure", async () => {
    const { client: first } = cannedClient([200]);
    const { client: second } = cannedClient([200]);
    const request = { operation: 'PutItem', input: { TableName: 't', Item: { k: { S: 'x' } } } } as const;
    const clock = clockAt();
    await sendWrite(first, request, undefined, new Departure(clock));
    second.middlewareStack.use(first.middlewareStack.clone());
    second.middlewareStack.add(
      (next) => async (args) => {
        clock.mono += 1_000;
        return next(args);
      },
      { step: 'finalizeRequest', priority: 'low', name: 'probe' },
    );
    const departure = new Departure(clock);
    await expect(sendWrite(second, request as never, undefined, departure)).resolves.toBeUndefined();
    expect(departure.lookup().lookupTime).toBe(1_100);
  });
});
