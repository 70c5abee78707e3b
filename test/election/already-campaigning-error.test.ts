import { describe, expect, it } from '@jest/globals';
import { DynamoDBLockError } from '../../src/index.js';
import { AlreadyCampaigningError, isAlreadyCampaigningError } from '../../src/election/already-campaigning-error.js';

describe('AlreadyCampaigningError', () => {
  it('is a DynamoDBLockError naming the key, with a guard that goes by name', () => {
    const error = new AlreadyCampaigningError({ partitionKey: 'leader', sortKey: 'eu' }, 'it already leads');
    expect(error).toBeInstanceOf(DynamoDBLockError);
    expect(error.message).toBe('Cannot campaign in the election on "leader"/"eu": it already leads; resign or abort the campaign first');
    expect(isAlreadyCampaigningError(error)).toBe(true);
    expect(isAlreadyCampaigningError(new Error('AlreadyCampaigningError'))).toBe(false);
  });
});
