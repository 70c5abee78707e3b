/**
 * A batch of new-lock writes DynamoDB refuses as a whole for what it holds
 * (a `ValidationException`: one key asked for twice in one tick of the event
 * loop) is split: its writes go out one PutItem each, for that burst only,
 * with a warning that names DynamoDB's error. Later bursts are batched again.
 */
import { expect, it } from '@jest/globals';
import type { Logger } from '../../src/index.js';
import { useLockTestBed } from '../../test-kit/jest/lock-test-bed-hook.js';
import { recording } from '../../test-kit/test-locks.js';

const bed = useLockTestBed('refused-batch');

function warningsLogger(): { logger: Logger; warnings: string[] } {
  const warnings: string[] = [];
  const logger: Logger = {
    debug: () => undefined,
    error: () => undefined,
    warn: (details, message) => warnings.push(`${message} (${String((details as { err?: unknown }).err)})`),
  };
  return { logger, warnings };
}

it('a key asked for twice in one burst: the burst goes out as single writes, the next burst is batched again', async () => {
  const recorder = recording(bed.dynamoDBClient('dup'));
  const { logger, warnings } = warningsLogger();
  const client = bed.client({ ownerName: 'dup', logger }, recorder.dynamoDB);

  const first = await Promise.all([
    client.tryAcquireLock('twice', { shouldSkipBlockingWait: true }),
    client.tryAcquireLock('twice', { shouldSkipBlockingWait: true }),
    ...Array.from({ length: 5 }, (_, i) => client.tryAcquireLock(`first-${i}`)),
  ]);
  const batchesBefore = recorder.named('BatchExecuteStatementCommand').length;
  const second = await Promise.all(Array.from({ length: 5 }, (_, i) => client.acquireLock(`second-${i}`)));

  expect(first.filter((lock) => lock !== undefined).map((lock) => lock?.partitionKey)).toEqual(
    expect.arrayContaining(['twice', 'first-0', 'first-1', 'first-2', 'first-3', 'first-4']),
  );
  expect(first.filter((lock) => lock?.partitionKey === 'twice')).toHaveLength(1);
  expect(second.map((lock) => lock.ownerName)).toEqual(second.map(() => 'dup'));
  // The refused batch, then the next burst's own batch.
  expect(recorder.named('BatchExecuteStatementCommand')).toHaveLength(batchesBefore + 1);
  expect(warnings).toHaveLength(1);
  expect(warnings[0]).toMatch(/ValidationException/);
  expect(warnings[0]).not.toMatch(/permission|from now on/i);
});
