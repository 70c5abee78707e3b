import { describe, expect, it } from '@jest/globals';
import { InvalidArgumentError } from '../../src/base/errors.js';
import { resolveCollectOptions } from '../../src/gc/collect-options.js';
import { COLLECT_DEFAULTS } from '../../src/settings/defaults.js';

describe('resolveCollectOptions', () => {
  it('fills in the defaults', () => {
    expect(resolveCollectOptions({})).toEqual({
      maxDuration: COLLECT_DEFAULTS.maxDuration,
      maxLease: Infinity,
      partitionKeyPrefix: undefined,
      dryRun: false,
      concurrency: COLLECT_DEFAULTS.concurrency,
      signal: undefined,
    });
  });

  it('takes Infinity for the bounds, and a prefix', () => {
    const signal = new AbortController().signal;
    expect(
      resolveCollectOptions({ maxDuration: Infinity, maxLease: 5_000, partitionKeyPrefix: 'jobs/', dryRun: true, concurrency: 1, signal }),
    ).toEqual({
      maxDuration: Infinity,
      maxLease: 5_000,
      partitionKeyPrefix: 'jobs/',
      dryRun: true,
      concurrency: 1,
      signal,
    });
  });

  it.each([
    [{ maxDuration: 0 }, /maxDuration/],
    [{ maxDuration: 1.5 }, /maxDuration/],
    [{ maxLease: -1 }, /maxLease/],
    [{ partitionKeyPrefix: '' }, /partitionKeyPrefix must be a non-empty string/],
    [{ partitionKeyPrefix: 7 }, /partitionKeyPrefix/],
    [{ dryRun: 'yes' }, /dryRun/],
    [{ concurrency: 0 }, /concurrency/],
    [{ signal: {} }, /signal/],
  ])('refuses %j with a clear InvalidArgumentError', (options, message) => {
    expect(() => resolveCollectOptions(options as never)).toThrow(InvalidArgumentError);
    expect(() => resolveCollectOptions(options as never)).toThrow(message);
  });
});
