/**
 * DynamoDBLocal before it runs: what it refuses and says without starting
 * java (integration/testing-helper.test.ts starts it).
 */
import { describe, expect, it } from '@jest/globals';
import { InvalidArgumentError } from '../../src/base/errors.js';
import { DynamoDBLocal } from '../../src/testing/index.js';

describe('DynamoDBLocal, not started', () => {
  it('refuses an unknown optimizeFor with a typed error', () => {
    const create = (): DynamoDBLocal => new DynamoDBLocal({ optimizeFor: 'speed' as 'startup' });
    expect(create).toThrow(InvalidArgumentError);
    expect(create).toThrow(`optimizeFor must be 'startup' or 'throughput', got "speed"`);
  });

  it('says it has not started when asked for its endpoint; stopped first, it never starts', async () => {
    const ddb = new DynamoDBLocal({ tableName: 'locks', optimizeFor: 'throughput' });
    expect(ddb.tableName).toBe('locks');
    expect(() => ddb.clientConfig).toThrow('DynamoDB Local has not started: await its start() first');
    await expect(ddb.stop()).resolves.toBeUndefined();
    await expect(ddb.start()).rejects.toThrow('DynamoDB Local was stopped before it was ready');
  });
});
