/**
 * The classification of the AWS SDK's errors: by `name`, HTTP status,
 * attempt count and cancellation reasons, as the SDK throws them (plain
 * objects here stand for errors of another copy of the SDK).
 */
import { describe, expect, it } from '@jest/globals';
import {
  attemptsOf,
  cancellationReasonsOf,
  exceptionOfStatementCode,
  isConditionalCheckFailed,
  isCredentialsError,
  isRefusedByDynamoDB,
  isResourceInUse,
  isRetryableCancellation,
  isTransactionCanceled,
  isGroupRace,
  isTransactionRace,
  itemOfFailedCondition,
  refusesPartiQL,
} from '../../src/dynamodb/sdk-errors.js';

const sdkError = (name: string, fields: object = {}): Error => Object.assign(new Error(name), { name, ...fields });
const canceled = (...codes: (string | undefined)[]): Error =>
  sdkError('TransactionCanceledException', { CancellationReasons: codes.map((Code) => (Code === undefined ? {} : { Code })) });

describe('transactions', () => {
  it('a canceled transaction gives its reasons in the order sent; other errors give none', () => {
    const error = canceled('None', 'ConditionalCheckFailed');
    expect(isTransactionCanceled(error)).toBe(true);
    expect(cancellationReasonsOf(error)).toEqual([{ Code: 'None' }, { Code: 'ConditionalCheckFailed' }]);
    expect(cancellationReasonsOf(sdkError('TransactionCanceledException'))).toEqual([]);
    expect(isTransactionCanceled(sdkError('ConditionalCheckFailedException'))).toBe(false);
    expect(cancellationReasonsOf(sdkError('ConditionalCheckFailedException', { CancellationReasons: [{ Code: 'None' }] }))).toBeUndefined();
  });

  it('the lock item (sent first) failing its condition is a failed condition, with its old item', () => {
    const item = { key: { S: 'k' } };
    const error = sdkError('TransactionCanceledException', {
      CancellationReasons: [{ Code: 'ConditionalCheckFailed', Item: item }, { Code: 'None' }],
    });
    expect([isConditionalCheckFailed(error), isTransactionRace(error)]).toEqual([true, false]);
    expect(itemOfFailedCondition(error)).toBe(item);
  });

  it.each([
    [['None', 'TransactionConflict'], true],
    [['None', 'ConditionalCheckFailed'], true],
    [['ThrottlingError', undefined], true],
    [['None', 'ValidationError'], false],
  ])('reasons %j: a race that a new read and write may win is %s', (codes, race) => {
    expect(isTransactionRace(canceled(...codes))).toBe(race);
    expect(isConditionalCheckFailed(canceled(...codes))).toBe(false);
  });

  it.each([
    [['ConditionalCheckFailed', 'None'], true],
    [['None', 'None', 'ConditionalCheckFailed'], true],
    [['TransactionConflict', 'ThrottlingError'], true],
    [['ConditionalCheckFailed', 'ValidationError'], false],
  ])("reasons %j: a group acquisition's race, any lock's condition included, is %s", (codes, race) => {
    expect(isGroupRace(canceled(...codes))).toBe(race);
  });

  it('only a cancellation is a group race', () => {
    expect(isGroupRace(sdkError('ConditionalCheckFailedException'))).toBe(false);
    expect(isGroupRace(sdkError('InternalServerError'))).toBe(false);
  });

  it('only conflicts and throttling make a cancellation worth sending again', () => {
    expect(['TransactionConflict', 'ThrottlingError', 'ProvisionedThroughputExceeded'].every(isRetryableCancellation)).toBe(true);
    expect(['ConditionalCheckFailed', 'ValidationError', 'None', undefined].some(isRetryableCancellation)).toBe(false);
  });
});

describe('refusals', () => {
  it.each(['AccessDeniedException', 'UnknownOperationException', 'ValidationException'])('%s refuses PartiQL', (name) => {
    expect(refusesPartiQL(sdkError(name))).toBe(true);
  });

  it('throttling or a server error does not refuse PartiQL', () => {
    expect(refusesPartiQL(sdkError('ThrottlingException'))).toBe(false);
    expect(refusesPartiQL(sdkError('InternalServerError'))).toBe(false);
    expect(refusesPartiQL(undefined)).toBe(false);
  });

  it.each(['CredentialsProviderError', 'UnrecognizedClientException', 'InvalidSignatureException'])('%s is a credentials error', (name) => {
    expect(isCredentialsError(sdkError(name))).toBe(true);
  });

  it('tells an existing table apart', () => {
    expect(isResourceInUse(sdkError('ResourceInUseException'))).toBe(true);
    expect(isResourceInUse(sdkError('ResourceNotFoundException'))).toBe(false);
    expect(isCredentialsError(sdkError('ResourceInUseException'))).toBe(false);
  });

  it('a 4xx answer is a refusal; a 5xx or no answer is not', () => {
    expect(isRefusedByDynamoDB(sdkError('ValidationException', { $metadata: { httpStatusCode: 400 } }))).toBe(true);
    expect(isRefusedByDynamoDB(sdkError('InternalServerError', { $metadata: { httpStatusCode: 500 } }))).toBe(false);
    expect(isRefusedByDynamoDB(sdkError('TimeoutError', { $metadata: {} }))).toBe(false);
  });
});

describe('what the SDK stamps on its errors', () => {
  it('reads the attempt count, when there is one', () => {
    expect(attemptsOf(sdkError('ThrottlingException', { $metadata: { attempts: 3 } }))).toBe(3);
    expect(attemptsOf(sdkError('ThrottlingException', { $metadata: { attempts: '3' } }))).toBeUndefined();
    expect(attemptsOf(new Error('no metadata'))).toBeUndefined();
    expect(attemptsOf(null)).toBeUndefined();
  });

  it('maps a batch statement code to the exception and status of a single call; unknown codes as server errors', () => {
    expect(exceptionOfStatementCode('ConditionalCheckFailed')).toEqual({ name: 'ConditionalCheckFailedException', httpStatusCode: 400 });
    expect(exceptionOfStatementCode('InternalServerError')).toEqual({ name: 'InternalServerError', httpStatusCode: 500 });
    expect(exceptionOfStatementCode('SomethingNew')).toEqual({ name: 'SomethingNew', httpStatusCode: 500 });
  });
});
