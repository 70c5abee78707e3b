/**
 * The fenced run's own requests to its counter table go out on the client
 * README shows, which sets no request timeout: each must carry a bound of
 * its own, or one request the fault proxy drops hangs its worker for good
 * (seen: the late-writing worker, never restarted, sent nothing more).
 */
import { expect, it } from '@jest/globals';
import type { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { readCounter, writeCounterLate, type CounterWriter } from '../../chaos/fenced-writes.js';
import type { Lock } from '../../src/index.js';

/** A sender that never answers, as behind a dropped request, and rejects once the call's signal aborts. */
function unanswered(): { writer: CounterWriter; signals: (AbortSignal | undefined)[] } {
  const signals: (AbortSignal | undefined)[] = [];
  const send = (_command: unknown, options?: { abortSignal?: AbortSignal }): Promise<never> => {
    signals.push(options?.abortSignal);
    return new Promise((_, reject) => options?.abortSignal?.addEventListener('abort', () => reject(options.abortSignal?.reason)));
  };
  return {
    writer: { dynamoDB: { send } as unknown as Pick<DynamoDBClient, 'send'>, dataTable: 'data', mode: 'unguarded', requestTimeoutMs: 50 },
    signals,
  };
}

it('bounds the read of a counter and the write of an unguarded late act', async () => {
  const { writer, signals } = unanswered();
  const lock = { throwIfLost: () => undefined } as unknown as Lock;
  const reading = readCounter(writer, 'k').catch(() => 'abandoned');
  const writing = writeCounterLate(writer, lock, 'k', 1, 0);
  expect(signals).toHaveLength(2);
  for (const signal of signals) {
    expect(signal).toBeInstanceOf(AbortSignal);
    expect(signal?.aborted).toBe(false);
  }
  // Abandoned, each ends: the read as a failure, the write as possibly applied.
  await expect(reading).resolves.toBe('abandoned');
  await expect(writing).resolves.toEqual({ outcome: 'unknown' });
});
