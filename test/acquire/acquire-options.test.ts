/**
 * `validateAcquireOptions` checks a call before any request. Most calls
 * carry no data or attributes and are not encoded to be measured: these
 * cases pin that the shortcut never lets an item over DynamoDB's limit
 * through, nor refuses one that fits.
 */
import { describe, expect, it } from '@jest/globals';
import { InvalidArgumentError } from '../../src/base/errors.js';
import { validateAcquireOptions, type AcquireSettings } from '../../src/acquire/acquire-options.js';
import { MAX_ITEM_BYTES } from '../../src/protocol/index.js';

const settings = (ownerName: string): AcquireSettings => ({
  table: { tableName: 'locks', partitionKeyName: 'key' },
  ownerName,
  defaultLeaseDuration: 20_000,
  heartbeatPeriod: 5_000,
  backgroundHeartbeats: true,
  safetyMargin: undefined,
});

function codeOf(check: () => void): string | undefined {
  try {
    check();
  } catch (error) {
    expect(error).toBeInstanceOf(InvalidArgumentError);
    return (error as InvalidArgumentError).code;
  }
  return undefined;
}

describe('the item-size check of a call without data or attributes', () => {
  it('refuses an owner name that alone makes the item too large (3-byte characters)', () => {
    const owner = '€'.repeat(Math.ceil(MAX_ITEM_BYTES / 3) + 1);
    expect(codeOf(() => validateAcquireOptions(settings(owner), { partitionKey: 'k', sortKey: undefined }, {}))).toBe('ITEM_TOO_LARGE');
  });

  it('accepts an owner name that keeps the item just within the limit', () => {
    const owner = 'o'.repeat(MAX_ITEM_BYTES - 200);
    expect(codeOf(() => validateAcquireOptions(settings(owner), { partitionKey: 'k', sortKey: undefined }, {}))).toBeUndefined();
  });

  it('refuses the same owner name once data pushes the item over', () => {
    const owner = 'o'.repeat(MAX_ITEM_BYTES - 200);
    expect(codeOf(() => validateAcquireOptions(settings(owner), { partitionKey: 'k', sortKey: undefined }, { data: 'x'.repeat(300) }))).toBe(
      'ITEM_TOO_LARGE',
    );
  });
});
