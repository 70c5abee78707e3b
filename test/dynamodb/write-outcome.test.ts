import { describe, expect, it } from '@jest/globals';
import { StatementFailedError } from '../../src/dynamodb/send-statement-batch.js';
import { isConditionalCheckFailed, isTransactionRace } from '../../src/dynamodb/sdk-errors.js';
import { classifyFailedWrite } from '../../src/dynamodb/write-outcome.js';

const OURS = { ownerName: 'me', recordVersionNumbers: ['rvn-sent'] };

/** An error as the AWS SDK throws it after `attempts` sends. */
function sdkError(name: string, status: number | undefined, attempts: number, extra: Record<string, unknown> = {}): Error {
  return Object.assign(new Error(name), { name, $metadata: { httpStatusCode: status, attempts }, ...extra });
}

const conditionFailed = (attempts: number, item?: Record<string, { S: string }>): Error =>
  sdkError('ConditionalCheckFailedException', 400, attempts, item === undefined ? {} : { Item: item });

describe('classifyFailedWrite', () => {
  it("a failed condition against someone else's item is a refusal, with the item as it is", () => {
    const item = { key: { S: 'k' }, ownerName: { S: 'other' }, recordVersionNumber: { S: 'rvn-other' } };
    expect(classifyFailedWrite(conditionFailed(1, item), OURS)).toEqual({ outcome: 'refused', item });
    // An SDK retry changes nothing: whatever the first attempt did, the lock is someone else's now.
    expect(classifyFailedWrite(conditionFailed(3, item), OURS)).toEqual({ outcome: 'refused', item });
  });

  it('a failed condition against the very RVN we sent is our own earlier attempt, applied', () => {
    const item = { key: { S: 'k' }, ownerName: { S: 'me' }, recordVersionNumber: { S: 'rvn-sent' } };
    expect(classifyFailedWrite(conditionFailed(2, item), OURS)).toEqual({ outcome: 'applied', recordVersionNumber: 'rvn-sent' });
  });

  it('our owner name with an RVN we did not send is not ours (another process may share the owner name)', () => {
    const item = { key: { S: 'k' }, ownerName: { S: 'me' }, recordVersionNumber: { S: 'rvn-elsewhere' } };
    expect(classifyFailedWrite(conditionFailed(2, item), OURS).outcome).toBe('refused');
  });

  it('a missing item is a refusal after one attempt, but may be our own delete after a retry', () => {
    expect(classifyFailedWrite(conditionFailed(1), OURS)).toEqual({ outcome: 'refused', item: undefined });
    expect(classifyFailedWrite(conditionFailed(1, {}), OURS)).toEqual({ outcome: 'refused', item: undefined });
    expect(classifyFailedWrite(conditionFailed(2), OURS)).toEqual({ outcome: 'unknown' });
  });

  it('a 4xx answer to the only attempt changed nothing; after a retry the first attempt may have been applied', () => {
    expect(classifyFailedWrite(sdkError('ThrottlingException', 400, 1), OURS).outcome).toBe('unapplied');
    expect(classifyFailedWrite(sdkError('ValidationException', 400, 1), OURS).outcome).toBe('unapplied');
    expect(classifyFailedWrite(sdkError('ThrottlingException', 400, 3), OURS).outcome).toBe('unknown');
  });

  it('without a count of attempts, a 4xx cannot rule out an earlier applied attempt', () => {
    const error = Object.assign(new Error('throttled'), { name: 'ThrottlingException', $metadata: { httpStatusCode: 400 } });
    expect(classifyFailedWrite(error, OURS).outcome).toBe('unknown');
  });

  it('5xx, timeouts, cut-off requests and aborts may have been applied', () => {
    expect(classifyFailedWrite(sdkError('InternalServerError', 500, 1), OURS).outcome).toBe('unknown');
    expect(classifyFailedWrite(sdkError('TimeoutError', undefined, 1), OURS).outcome).toBe('unknown');
    expect(classifyFailedWrite(new DOMException('aborted', 'AbortError'), OURS).outcome).toBe('unknown');
  });

  it('a connection never made is unapplied on the only attempt, unknown after earlier attempts', () => {
    expect(classifyFailedWrite(sdkError('Error', undefined, 1, { code: 'ECONNREFUSED' }), OURS).outcome).toBe('unapplied');
    expect(classifyFailedWrite(sdkError('Error', undefined, 2, { code: 'ECONNREFUSED' }), OURS).outcome).toBe('unknown');
  });

  it('a batch statement carries the attempts of its whole call', () => {
    const item = { key: { S: 'k' }, ownerName: { S: 'me' }, recordVersionNumber: { S: 'rvn-sent' } };
    expect(classifyFailedWrite(new StatementFailedError('ThrottlingError', undefined, undefined, 1), OURS).outcome).toBe('unapplied');
    expect(classifyFailedWrite(new StatementFailedError('ThrottlingError', undefined, undefined, 2), OURS).outcome).toBe('unknown');
    expect(classifyFailedWrite(new StatementFailedError('ConditionalCheckFailed', undefined, item, 2), OURS).outcome).toBe('applied');
  });
});

describe('a fenced acquisition canceled as a transaction (the lock item first)', () => {
  const canceled = (attempts: number, ...reasons: { Code: string; Item?: Record<string, { S: string }> }[]): Error =>
    sdkError('TransactionCanceledException', 400, attempts, { CancellationReasons: reasons });

  it('is the lock write’s condition failing when the lock item’s reason says so, with its item', () => {
    const other = { key: { S: 'k' }, ownerName: { S: 'other' }, recordVersionNumber: { S: 'rvn-other' } };
    const ours = { key: { S: 'k' }, ownerName: { S: 'me' }, recordVersionNumber: { S: 'rvn-sent' } };
    const refused = canceled(1, { Code: 'ConditionalCheckFailed', Item: other }, { Code: 'None' });
    expect(isConditionalCheckFailed(refused)).toBe(true);
    expect(isTransactionRace(refused)).toBe(false);
    expect(classifyFailedWrite(refused, OURS)).toEqual({ outcome: 'refused', item: other });
    expect(classifyFailedWrite(canceled(2, { Code: 'ConditionalCheckFailed', Item: ours }, { Code: 'None' }), OURS).outcome).toBe('applied');
  });

  it('is a race, nothing applied, when only the counter’s condition failed or a write of its items was under way', () => {
    for (const reasons of [
      [{ Code: 'None' }, { Code: 'ConditionalCheckFailed' }],
      [{ Code: 'TransactionConflict' }, { Code: 'None' }],
      [{ Code: 'None' }, { Code: 'TransactionConflict' }],
    ]) {
      const error = canceled(1, ...reasons);
      expect(isConditionalCheckFailed(error)).toBe(false);
      expect(isTransactionRace(error)).toBe(true);
      expect(classifyFailedWrite(error, OURS).outcome).toBe('unapplied');
    }
    expect(isTransactionRace(canceled(1, { Code: 'None' }, { Code: 'ValidationError' }))).toBe(false);
    expect(isTransactionRace(sdkError('ConditionalCheckFailedException', 400, 1))).toBe(false);
  });
});
