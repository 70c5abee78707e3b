/**
 * Counts the DynamoDB calls an SDK v3 client makes, by operation, with a
 * middleware on the client's own stack. It sits in the `initialize` step,
 * which runs once per `send`: the SDK's own retries of a call are not counted
 * again, so the numbers are calls as the lock protocol makes them. Document
 * clients (lib-dynamodb) built on the client share its stack and are counted
 * too. Used by the integration tests and the benchmarks; free of jest.
 */
import type { DynamoDBClient } from '@aws-sdk/client-dynamodb';

export interface CallCounter {
  /** Operation names in the order they were sent, e.g. `['PutItem', 'DeleteItem']`. */
  readonly calls: readonly string[];
  /** Calls per operation since the last {@link reset}. */
  counts(): Record<string, number>;
  /** All calls since the last {@link reset}. */
  total(): number;
  /** Calls since the last {@link reset} whose reply (or error) has arrived. */
  answered(): number;
  reset(): void;
  /** Takes the middleware off the client. */
  detach(): void;
}

let counters = 0;

export function countCalls(client: Pick<DynamoDBClient, 'middlewareStack'>): CallCounter {
  const calls: string[] = [];
  let answered = 0;
  let generation = 0;
  // A unique name, so that two counters can watch one client.
  const name = `countLockCalls${++counters}`;
  client.middlewareStack.add(
    (next, context) => async (args) => {
      calls.push((context.commandName ?? 'unknown').replace(/Command$/, ''));
      const sentIn = generation;
      try {
        return await next(args);
      } finally {
        if (sentIn === generation) answered++;
      }
    },
    { step: 'initialize', name },
  );
  return {
    calls,
    counts: () => {
      const counts: Record<string, number> = {};
      for (const call of calls) counts[call] = (counts[call] ?? 0) + 1;
      return counts;
    },
    total: () => calls.length,
    answered: () => answered,
    reset: () => {
      calls.length = 0;
      answered = 0;
      generation++;
    },
    detach: () => {
      client.middlewareStack.remove(name);
    },
  };
}
