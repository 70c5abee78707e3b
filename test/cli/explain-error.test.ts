import { describe, expect, it } from '@jest/globals';
import { DynamoDBTimeoutError, LockTableDoesNotExistError, LockTableSchemaMismatchError } from '../../src/index.js';
import { explainError } from '../../src/cli/explain-error.js';
import { InterruptedError, UsageError } from '../../src/cli/usage-error.js';

describe('exit codes', () => {
  it('of errors, each with a hint that names the fix', () => {
    expect(explainError(new UsageError('bad', 'run'))).toEqual({ message: 'bad (see dynamodb-lock run --help)', exitCode: 2 });
    expect(explainError(new InterruptedError('SIGINT'))).toEqual({ message: undefined, exitCode: 130 });
    const missing = explainError(new LockTableDoesNotExistError('locks'));
    expect(missing.exitCode).toBe(1);
    expect(missing.message).toContain('dynamodb-lock create-table --table locks');
    expect(explainError(new Error('Region is missing')).message).toContain('AWS_REGION');
    const refused = Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:1'), { code: 'ECONNREFUSED' });
    expect(explainError(refused).message).toContain('--endpoint');
    const timeout = new DOMException('no answer within 20000 ms: the request was abandoned', 'TimeoutError');
    expect(explainError(timeout).message).toContain('--endpoint');
    // getLock and listings wrap that TimeoutError; the operator gets the same hint.
    const unanswered = explainError(new DynamoDBTimeoutError('getLock("job")', 20_000, timeout));
    expect(unanswered).toEqual({
      message:
        'cannot reach DynamoDB (getLock("job"): DynamoDB did not answer within 20000 ms; the request was abandoned); check --endpoint, AWS_ENDPOINT_URL_DYNAMODB and the network',
      exitCode: 1,
    });
    expect(explainError(Object.assign(new Error('Table already exists'), { name: 'ResourceInUseException' })).message).toContain(
      '--if-not-exists',
    );
  });

  it('of a key schema that does not fit, in the words of the flags that set the key names', () => {
    const mismatch = new LockTableSchemaMismatchError(
      'jobs',
      'The client\'s sortKeyName "shard" does not match lock table "jobs", which has no sort key',
    );
    expect(explainError(mismatch)).toEqual({
      message:
        'The client\'s --sort-key-name "shard" does not match lock table "jobs", which has no sort key; pass the table\'s key names with --partition-key-name and --sort-key-name',
      exitCode: 1,
    });
  });
});
