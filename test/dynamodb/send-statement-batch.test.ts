/**
 * Each statement of a batch that failed is reported as the error a single
 * call would have thrown, so that the lock logic sorts it the same way: a
 * refused condition loses the lock (and names the holder), throttling is
 * retried and certainly not applied, a server error may have been applied.
 */
import type { BatchExecuteStatementCommandOutput, DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { describe, expect, it } from '@jest/globals';
import { isConditionalCheckFailed, isThrottling, isTransient, isValidationError, itemOfFailedCondition } from '../../src/dynamodb/sdk-errors.js';
import { StatementFailedError as PublicStatementFailedError } from '../../src/index.js';
import { StatementFailedError, sendStatementBatch } from '../../src/dynamodb/send-statement-batch.js';
import { classifyFailedWrite } from '../../src/dynamodb/write-outcome.js';

const OURS = { ownerName: 'me', recordVersionNumbers: ['rvn-sent'] };

const STATEMENT = { Statement: 'UPDATE "locks" SET "leaseDuration" = ? WHERE "key" = ?', Parameters: [{ S: '1' }, { S: 'k' }] };

/** A DynamoDB client whose every call answers with `responses` (DynamoDB Local cannot be made to throttle one statement). */
function answering(responses: BatchExecuteStatementCommandOutput['Responses'], attempts = 1): Pick<DynamoDBClient, 'send'> {
  return { send: async () => ({ Responses: responses, $metadata: { attempts } }) };
}

describe('StatementFailedError', () => {
  it('a refused condition reads as ConditionalCheckFailedException and carries the item as it was', () => {
    const item = { key: { S: 'k' }, ownerName: { S: 'thief' } };
    const error = new StatementFailedError('ConditionalCheckFailed', 'The conditional request failed', item, 1);
    expect(isConditionalCheckFailed(error)).toBe(true);
    expect(itemOfFailedCondition(error)).toBe(item);
    expect(classifyFailedWrite(error, OURS)).toEqual({ outcome: 'refused', item });
    expect(isTransient(error)).toBe(false);
  });

  it.each(['ProvisionedThroughputExceeded', 'ThrottlingError', 'RequestLimitExceeded'])(
    '%s is throttling: retried, and certainly not applied',
    (code) => {
      const error = new StatementFailedError(code, undefined, undefined, 1);
      expect([isThrottling(error), isTransient(error), classifyFailedWrite(error, OURS).outcome]).toEqual([true, true, 'unapplied']);
    },
  );

  it('a server error is retried, and may have been applied', () => {
    const error = new StatementFailedError('InternalServerError', 'oops', undefined, 1);
    expect([isTransient(error), classifyFailedWrite(error, OURS).outcome]).toEqual([true, 'unknown']);
  });

  it('an unknown code is taken as a server error, so the write counts as possibly applied', () => {
    const error = new StatementFailedError('SomethingNew', undefined, undefined, 1);
    expect([error.name, isTransient(error), classifyFailedWrite(error, OURS).outcome]).toEqual(['SomethingNew', true, 'unknown']);
  });

  it('a validation error reads as ValidationException, the message kept', () => {
    const error = new StatementFailedError('ValidationError', 'bad statement', undefined, 1);
    expect(isValidationError(error)).toBe(true);
    expect(error.message).toBe('bad statement');
    expect(error).toBeInstanceOf(Error);
  });

  it('is the class the package exports, for instanceof checks on heartbeatError events', () => {
    expect(new StatementFailedError('ThrottlingError', undefined, undefined, 1)).toBeInstanceOf(PublicStatementFailedError);
  });
});

describe('sendStatementBatch', () => {
  it('reports each statement in order: undefined where applied, its error where not', async () => {
    const outcomes = await sendStatementBatch(
      answering([{ TableName: 'locks' }, { Error: { Code: 'ConditionalCheckFailed', Message: 'no', Item: { key: { S: 'b' } } } }, {}]),
      [STATEMENT, STATEMENT, STATEMENT],
      new AbortController().signal,
    );
    expect(outcomes.map((outcome) => outcome?.name)).toEqual([undefined, 'ConditionalCheckFailedException', undefined]);
    expect(itemOfFailedCondition(outcomes[1])).toEqual({ key: { S: 'b' } });
  });

  it('a statement the reply says nothing about counts as possibly applied', async () => {
    const outcomes = await sendStatementBatch(answering([{}]), [STATEMENT, STATEMENT], new AbortController().signal);
    expect(outcomes[0]).toBeUndefined();
    expect([isTransient(outcomes[1]), classifyFailedWrite(outcomes[1], OURS).outcome]).toEqual([true, 'unknown']);
  });

  it('a statement of a call the SDK sent more than once may have been applied by an earlier attempt', async () => {
    const ours = { key: { S: 'a' }, ownerName: { S: 'me' }, recordVersionNumber: { S: 'rvn-sent' } };
    const outcomes = await sendStatementBatch(
      answering([{ Error: { Code: 'ThrottlingError' } }, { Error: { Code: 'ConditionalCheckFailed', Item: ours } }], 2),
      [STATEMENT, STATEMENT],
      new AbortController().signal,
    );
    expect(outcomes.map((outcome) => classifyFailedWrite(outcome, OURS).outcome)).toEqual(['unknown', 'applied']);
  });
});
