import { describe, expect, it } from '@jest/globals';
import { LockTableDoesNotExistError } from '../../src/index.js';
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
    expect(explainError(Object.assign(new Error('Table already exists'), { name: 'ResourceInUseException' })).message).toContain(
      '--if-not-exists',
    );
  });
});
