import { describe, expect, it } from '@jest/globals';
import { buildScanRequest } from '../../src/protocol/index.js';

const TABLE = { tableName: 'locks', partitionKeyName: 'lockKey' };

describe('buildScanRequest with partitionKeyPrefix', () => {
  it('filters on the partition key prefix, keeping the paging and consistency options', () => {
    const start = { lockKey: { S: 'jobs/41' } };
    expect(buildScanRequest(TABLE, { partitionKeyPrefix: 'jobs/', exclusiveStartKey: start, consistentRead: true })).toEqual({
      TableName: 'locks',
      FilterExpression: 'begins_with(#pk, :prefix)',
      ExpressionAttributeNames: { '#pk': 'lockKey' },
      ExpressionAttributeValues: { ':prefix': { S: 'jobs/' } },
      ExclusiveStartKey: start,
      ConsistentRead: true,
    });
  });

  it('without a prefix is the Scan Java sends', () => {
    expect(buildScanRequest(TABLE, { partitionKeyPrefix: undefined })).toEqual({ TableName: 'locks' });
  });
});
