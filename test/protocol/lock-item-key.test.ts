import { describe, expect, it } from '@jest/globals';
import { keyOfLockItem, lockItemKey } from '../../src/protocol/index.js';

const SCHEMA = { partitionKeyName: 'key' };
const WITH_SORT_KEY = { partitionKeyName: 'key', sortKeyName: 'sk' };

describe('keyOfLockItem', () => {
  it('reads the key attributes of an item, with or without a sort key, when they are strings', () => {
    expect(keyOfLockItem(SCHEMA, { key: { S: 'a' }, ownerName: { S: 'o' } })).toEqual({ partitionKey: 'a' });
    expect(keyOfLockItem(WITH_SORT_KEY, { key: { S: 'a' }, sk: { S: 's' } })).toEqual({ partitionKey: 'a', sortKey: 's' });
    expect(keyOfLockItem(WITH_SORT_KEY, { key: { S: 'a' } })).toBeUndefined();
    expect(keyOfLockItem(SCHEMA, { key: { N: '1' } })).toBeUndefined();
  });

  it('is the inverse of lockItemKey', () => {
    const key = { partitionKey: 'a', sortKey: 's' };
    expect(keyOfLockItem(WITH_SORT_KEY, lockItemKey(WITH_SORT_KEY, key))).toEqual(key);
  });
});
