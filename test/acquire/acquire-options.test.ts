/**
 * A call's options before any request: `resolveAcquireOptions` fills in
 * the defaults, the one place they are read, and `validateAcquireKey`
 * checks the key and its item. Most calls carry no data or attributes and
 * are not encoded to be measured: those cases pin that the shortcut never
 * lets an item over DynamoDB's limit through, nor refuses one that fits.
 */
import { describe, expect, it } from '@jest/globals';
import { InvalidArgumentError } from '../../src/base/errors.js';
import { resolveAcquireOptions, validateAcquireKey, type AcquireLockOptions, type AcquireSettings } from '../../src/acquire/acquire-options.js';
import { ACQUIRE_DEFAULTS } from '../../src/settings/defaults.js';
import { MAX_ITEM_BYTES } from '../../src/protocol/index.js';

const settings = (ownerName: string): AcquireSettings => ({
  table: { tableName: 'locks', partitionKeyName: 'key' },
  ownerName,
  defaultLeaseDuration: 20_000,
  heartbeatPeriod: 5_000,
  backgroundHeartbeats: true,
  safetyMargin: undefined,
});

const key = { partitionKey: 'k', sortKey: undefined };

/** The checks of a call on `key` with `options`, as the acquirer runs them. */
function validate(ctx: AcquireSettings, options: AcquireLockOptions): void {
  validateAcquireKey(ctx, key, resolveAcquireOptions(ctx, options));
}

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
    expect(codeOf(() => validate(settings(owner), {}))).toBe('ITEM_TOO_LARGE');
  });

  it('accepts an owner name that keeps the item just within the limit', () => {
    const owner = 'o'.repeat(MAX_ITEM_BYTES - 200);
    expect(codeOf(() => validate(settings(owner), {}))).toBeUndefined();
  });

  it('refuses the same owner name once data pushes the item over', () => {
    const owner = 'o'.repeat(MAX_ITEM_BYTES - 200);
    expect(codeOf(() => validate(settings(owner), { data: 'x'.repeat(300) }))).toBe('ITEM_TOO_LARGE');
  });
});

describe('resolveAcquireOptions', () => {
  const ctx = settings('me');

  it('fills in every default: the acquire defaults, and the client’s lease', () => {
    expect(resolveAcquireOptions(ctx, {})).toEqual({
      refreshPeriod: ACQUIRE_DEFAULTS.refreshPeriod,
      additionalTimeToWaitForLock: ACQUIRE_DEFAULTS.additionalTimeToWaitForLock,
      turnLength: Infinity,
      leaseDuration: 20_000,
      replaceData: true,
      deleteLockOnRelease: true,
    });
  });

  it('keeps what the caller set, and every other option as it came', () => {
    const signal = new AbortController().signal;
    const given = {
      refreshPeriod: 250,
      additionalTimeToWaitForLock: Infinity,
      turnLength: 0,
      leaseDuration: 10_000,
      replaceData: false,
      deleteLockOnRelease: false,
      reentrant: true,
      signal,
    };
    expect(resolveAcquireOptions(ctx, given)).toEqual(given);
  });

  it('refuses bad durations and a lease too short for the heartbeats, as the options are read', () => {
    expect(codeOf(() => resolveAcquireOptions(ctx, { refreshPeriod: -1 }))).toBe('INVALID_DURATION');
    // Under 10 ms a waiter would read the lock without a pause: the same minimum as a semaphore's and an election's.
    expect(codeOf(() => resolveAcquireOptions(ctx, { refreshPeriod: 0 }))).toBe('INVALID_DURATION');
    expect(codeOf(() => resolveAcquireOptions(ctx, { refreshPeriod: 9 }))).toBe('INVALID_DURATION');
    expect(resolveAcquireOptions(ctx, { refreshPeriod: 10 }).refreshPeriod).toBe(10);
    expect(codeOf(() => resolveAcquireOptions(ctx, { turnLength: 1.5 }))).toBe('INVALID_DURATION');
    expect(codeOf(() => resolveAcquireOptions(ctx, { additionalTimeToWaitForLock: Number.NaN }))).toBe('INVALID_DURATION');
    expect(codeOf(() => resolveAcquireOptions(ctx, { leaseDuration: 9_999 }))).toBe('LEASE_TOO_SHORT');
  });
});
