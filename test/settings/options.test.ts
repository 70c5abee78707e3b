/**
 * resolveSettings: the Java defaults (PROTOCOL.md §8.1) and the checks that
 * run before the client sends anything.
 */
import { describe, expect, it, jest } from '@jest/globals';
import { hostname } from 'node:os';
import { CLIENT_DEFAULTS } from '../../src/settings/defaults.js';
import { DynamoDBLockError, InvalidArgumentError, type InvalidArgumentCode } from '../../src/base/errors.js';
import {
  checkDuration,
  defaultOwnerName,
  checkLockLease,
  resolveSettings,
  safetyMarginFor,
  type LockClientSettings,
} from '../../src/settings/options.js';

const UUID = '[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}';

function escapeRegExp(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}

function refusal(run: () => unknown): InvalidArgumentError {
  try {
    run();
  } catch (error) {
    expect(error).toBeInstanceOf(InvalidArgumentError);
    expect(error).toBeInstanceOf(DynamoDBLockError);
    return error as InvalidArgumentError;
  }
  throw new Error('expected an InvalidArgumentError, nothing was thrown');
}

function expectCode(run: () => unknown, code: InvalidArgumentCode): InvalidArgumentError {
  const error = refusal(run);
  expect(error.code).toBe(code);
  return error;
}

/** Lets tests pass values TypeScript would reject, as JavaScript callers can. */
function settings(extra: Record<string, unknown>): LockClientSettings {
  return { tableName: 'locks', ...extra };
}

describe('resolveSettings: defaults', () => {
  it('applies the client defaults', () => {
    const resolved = resolveSettings({ tableName: 'locks' });
    expect(resolved).toEqual({
      tableName: 'locks',
      sortKeyName: undefined,
      ownerName: expect.any(String),
      ...CLIENT_DEFAULTS,
      heartbeatPeriod: 5_000,
    });
  });

  it('the default owner name is the host name, a colon and a random UUID, so that one can tell where the host ends', () => {
    const pattern = new RegExp(`^${escapeRegExp(hostname())}:${UUID}$`);
    const a = resolveSettings({ tableName: 'locks' }).ownerName;
    const b = resolveSettings({ tableName: 'locks' }).ownerName;
    expect(a).toMatch(pattern);
    expect(b).toMatch(pattern);
    expect(a).not.toBe(b); // unique per client instance
    expect(defaultOwnerName()).toMatch(pattern);
  });

  it('falls back to the UUID alone when the host name cannot be resolved', async () => {
    jest.unstable_mockModule('node:os', () => ({
      hostname: () => {
        throw new Error('no host name');
      },
    }));
    let owner = '';
    await jest.isolateModulesAsync(async () => {
      const options = await import('../../src/settings/options.js');
      owner = options.defaultOwnerName();
    });
    expect(owner).toMatch(new RegExp(`^${UUID}$`));
  });

  it('keeps every option it is given', () => {
    const resolved = resolveSettings({
      tableName: 'locks',
      partitionKeyName: 'pk',
      sortKeyName: 'sk',
      ownerName: 'me',
      leaseDuration: 40_000,
      heartbeatPeriod: 10_000,
      backgroundHeartbeats: false,
      heartbeatConcurrency: 1,
      heartbeatBatchSize: 1,
      holdLockOnServiceUnavailable: true,
      maxLockObservationCacheSize: 1,
      allowEventuallyConsistentGlobalTable: true,
    });
    expect(resolved).toEqual({
      tableName: 'locks',
      partitionKeyName: 'pk',
      sortKeyName: 'sk',
      ownerName: 'me',
      leaseDuration: 40_000,
      heartbeatPeriod: 10_000,
      backgroundHeartbeats: false,
      heartbeatConcurrency: 1,
      heartbeatBatchSize: 1,
      holdLockOnServiceUnavailable: true,
      maxLockObservationCacheSize: 1,
      allowEventuallyConsistentGlobalTable: true,
    });
  });
});

describe('resolveSettings: lease versus heartbeat period', () => {
  it('refuses a lease shorter than twice the heartbeat period when heartbeating in the background', () => {
    const error = expectCode(() => resolveSettings({ tableName: 'locks', leaseDuration: 9_999, heartbeatPeriod: 5_000 }), 'LEASE_TOO_SHORT');
    expect(error.message).toContain('9999');
    expect(error.message).toContain('5000');
    expectCode(() => resolveSettings({ tableName: 'locks', heartbeatPeriod: 10_001 }), 'LEASE_TOO_SHORT'); // default lease 20000
    expectCode(
      () => resolveSettings({ tableName: 'locks', leaseDuration: 1_000, heartbeatPeriod: 5_000, backgroundHeartbeats: true }),
      'LEASE_TOO_SHORT',
    );
  });

  it('allows exactly twice the heartbeat period', () => {
    expect(resolveSettings({ tableName: 'locks', leaseDuration: 10_000, heartbeatPeriod: 5_000 }).leaseDuration).toBe(10_000);
    expect(resolveSettings({ tableName: 'locks', heartbeatPeriod: 10_000 }).heartbeatPeriod).toBe(10_000);
    expect(resolveSettings({ tableName: 'locks', leaseDuration: 2, heartbeatPeriod: 1 }).leaseDuration).toBe(2);
  });

  it('does not check the relation when background heartbeats are off', () => {
    const resolved = resolveSettings({ tableName: 'locks', leaseDuration: 1_000, heartbeatPeriod: 5_000, backgroundHeartbeats: false });
    expect(resolved.leaseDuration).toBe(1_000);
    expect(resolved.backgroundHeartbeats).toBe(false);
  });
});

describe('resolveSettings: the heartbeat period follows the lease', () => {
  it('takes a lease alone: its heartbeat period is a quarter of it', () => {
    const resolved = resolveSettings({ tableName: 'locks', leaseDuration: 5_000 });
    expect(resolved.leaseDuration).toBe(5_000);
    expect(resolved.heartbeatPeriod).toBe(1_250);
  });

  it('gives the default lease Java’s heartbeat period of 5 s', () => {
    expect(resolveSettings({ tableName: 'locks' }).heartbeatPeriod).toBe(5_000);
  });

  it('keeps a heartbeat period that is set, and checks it against the lease', () => {
    expect(resolveSettings({ tableName: 'locks', leaseDuration: 5_000, heartbeatPeriod: 2_500 }).heartbeatPeriod).toBe(2_500);
    expectCode(() => resolveSettings({ tableName: 'locks', leaseDuration: 5_000, heartbeatPeriod: 5_000 }), 'LEASE_TOO_SHORT');
  });

  it('rounds down to whole milliseconds, never below 1', () => {
    expect(resolveSettings({ tableName: 'locks', leaseDuration: 1_001 }).heartbeatPeriod).toBe(250);
    expect(resolveSettings({ tableName: 'locks', leaseDuration: 3 }).heartbeatPeriod).toBe(1);
  });
});

describe('resolveSettings: invalid values', () => {
  const badDurations: unknown[] = [-1, -20_000, 1.5, 0.1, Number.NaN, '20000', Infinity, -Infinity, 2 ** 53, {}, true];

  it.each(['leaseDuration', 'heartbeatPeriod'])('%s: refuses anything but a whole number of milliseconds ≥ 1', (name) => {
    for (const value of badDurations) {
      const error = expectCode(() => resolveSettings(settings({ backgroundHeartbeats: false, [name]: value })), 'INVALID_DURATION');
      expect(error.message).toContain(name);
    }
    expectCode(() => resolveSettings(settings({ backgroundHeartbeats: false, [name]: 0 })), 'INVALID_DURATION');
  });

  it('refuses an empty or non-string table name', () => {
    for (const tableName of ['', undefined, 42, null]) {
      const error = expectCode(() => resolveSettings({ tableName } as unknown as LockClientSettings), 'INVALID_OPTION');
      expect(error.message).toContain('tableName');
    }
  });

  it('refuses a fencing table name DynamoDB would refuse, or the lock table itself', () => {
    for (const fencingTableName of ['', 'x', 'has space', 42]) {
      expect(expectCode(() => resolveSettings(settings({ fencingTableName })), 'INVALID_OPTION').message).toContain('fencingTableName');
    }
    expectCode(() => resolveSettings(settings({ fencingTableName: 'locks' })), 'CONFLICTING_OPTIONS');
    expect(resolveSettings(settings({ fencingTableName: 'locks-fencing' })).fencingTableName).toBe('locks-fencing');
  });

  it.each(['partitionKeyName', 'sortKeyName', 'ownerName'])('refuses an empty %s', (name) => {
    const error = expectCode(() => resolveSettings(settings({ [name]: '' })), 'INVALID_OPTION');
    expect(error.message).toContain(name);
  });

  it.each(['leaseDuration', 'heartbeatPeriod', 'safetyMargin'])('refuses a %s over 2^31 - 1 ms', (name) => {
    expectCode(() => resolveSettings(settings({ backgroundHeartbeats: false, [name]: 2 ** 31 })), 'INVALID_DURATION');
  });

  it.each(['ownerName', 'leaseDuration', 'recordVersionNumber', 'isReleased', 'data'])(
    'refuses %s as a key attribute name: the lock item writes that attribute itself',
    (name) => {
      expect(expectCode(() => resolveSettings(settings({ partitionKeyName: name })), 'RESERVED_ATTRIBUTE').message).toContain(name);
      expect(expectCode(() => resolveSettings(settings({ sortKeyName: name })), 'RESERVED_ATTRIBUTE').message).toContain('sortKeyName');
    },
  );

  it.each(['partitionKeyName', 'sortKeyName', 'ownerName'])('refuses a %s with a lone surrogate (not well-formed UTF-16)', (name) => {
    expectCode(() => resolveSettings(settings({ [name]: 'host\ud800' })), 'INVALID_OPTION');
    expect(() => resolveSettings(settings({ [name]: 'h\u00f6st-\ud83d\udd12' }))).not.toThrow();
  });

  it('refuses the same name for partition and sort key', () => {
    expectCode(() => resolveSettings({ tableName: 'locks', partitionKeyName: 'id', sortKeyName: 'id' }), 'CONFLICTING_OPTIONS');
    // The default partition key name counts too.
    expectCode(() => resolveSettings({ tableName: 'locks', sortKeyName: 'key' }), 'CONFLICTING_OPTIONS');
    expect(resolveSettings({ tableName: 'locks', sortKeyName: 'Key' }).sortKeyName).toBe('Key');
  });

  it.each(['heartbeatConcurrency', 'maxLockObservationCacheSize'])('%s must be a whole number ≥ 1', (name) => {
    for (const value of [0, -1, 1.5, Number.NaN, Infinity, '4']) {
      const error = expectCode(() => resolveSettings(settings({ [name]: value })), 'INVALID_OPTION');
      expect(error.message).toContain(name);
    }
    expect(resolveSettings(settings({ [name]: 1 }))[name as 'heartbeatConcurrency']).toBe(1);
  });

  it("heartbeatBatchSize must be a whole number from 1 to 25, DynamoDB's limit for one batch", () => {
    for (const value of [0, 26, 1.5, Number.NaN, '25']) {
      const error = expectCode(() => resolveSettings(settings({ heartbeatBatchSize: value })), 'INVALID_OPTION');
      expect(error.message).toContain('heartbeatBatchSize must be a whole number from 1 to 25');
    }
    expect(resolveSettings(settings({ heartbeatBatchSize: 1 })).heartbeatBatchSize).toBe(1);
    expect(resolveSettings(settings({ heartbeatBatchSize: 25 })).heartbeatBatchSize).toBe(25);
  });
});

describe('checkDuration', () => {
  it('accepts whole milliseconds from the minimum up to what a Node timer can wait', () => {
    expect(checkDuration('d', 0)).toBe(0);
    expect(checkDuration('d', 5, { min: 5 })).toBe(5);
    expect(checkDuration('d', 2 ** 31 - 1)).toBe(2 ** 31 - 1);
  });

  it('refuses durations over 2^31 - 1 ms, which setTimeout would fire after 1 ms', () => {
    for (const value of [2 ** 31, 2 ** 40, Number.MAX_SAFE_INTEGER]) {
      const error = expectCode(() => checkDuration('refreshPeriod', value), 'INVALID_DURATION');
      expect(error.message).toContain('2147483647');
      expectCode(() => checkDuration('d', value, { allowInfinity: true }), 'INVALID_DURATION');
    }
  });

  it('refuses values below the minimum', () => {
    expectCode(() => checkDuration('d', 4, { min: 5 }), 'INVALID_DURATION');
    expectCode(() => checkDuration('d', -1), 'INVALID_DURATION');
  });

  it('accepts Infinity only when allowed, and never -Infinity', () => {
    expectCode(() => checkDuration('d', Infinity), 'INVALID_DURATION');
    expect(checkDuration('d', Infinity, { allowInfinity: true })).toBe(Infinity);
    expectCode(() => checkDuration('d', -Infinity, { allowInfinity: true }), 'INVALID_DURATION');
    expectCode(() => checkDuration('d', Number.NaN, { allowInfinity: true }), 'INVALID_DURATION');
  });

  it('names the option and the value in its message', () => {
    const error = expectCode(() => checkDuration('refreshPeriod', 1.5), 'INVALID_DURATION');
    expect(error.message).toContain('refreshPeriod');
    expect(error.message).toContain('1.5');
  });
});

describe('table name and safety margin', () => {
  it.each(['t', 'ab', 'has space', 'slash/name', 'x'.repeat(256), ''])('refuses table name %j before any call', (tableName) => {
    const error = expectCode(() => resolveSettings(settings({ tableName })), 'INVALID_OPTION');
    expect(error.message).toContain('tableName');
  });

  it.each(['abc', 'my_locks.v2-prod', 'x'.repeat(255)])('accepts table name %j', (tableName) => {
    expect(resolveSettings({ tableName }).tableName).toBe(tableName);
  });

  it('defaults the safety margin to a tenth of each lock’s lease', () => {
    expect(resolveSettings({ tableName: 'locks' }).safetyMargin).toBeUndefined();
    expect(safetyMarginFor(20_000, { safetyMargin: undefined })).toBe(2_000);
    expect(safetyMarginFor(1_000, { safetyMargin: 250 })).toBe(250);
  });

  it('refuses a margin that would give a lock up before its first heartbeat is due', () => {
    // 20 000 - 15 000 = 5 000 is not more than the 5 000 ms heartbeat period.
    const error = expectCode(() => resolveSettings({ tableName: 'locks', safetyMargin: 15_000 }), 'LEASE_TOO_SHORT');
    expect(error.message).toContain('safetyMargin');
    expect(resolveSettings({ tableName: 'locks', safetyMargin: 14_999 }).safetyMargin).toBe(14_999);
    // Without background heartbeats the margin only has to leave some lease.
    expect(resolveSettings({ tableName: 'locks', safetyMargin: 19_999, backgroundHeartbeats: false }).safetyMargin).toBe(19_999);
    expectCode(() => resolveSettings({ tableName: 'locks', safetyMargin: 20_000, backgroundHeartbeats: false }), 'LEASE_TOO_SHORT');
  });

  it('checks a per-lock lease against the margin as well', () => {
    const resolved = resolveSettings({ tableName: 'locks', safetyMargin: 5_000 });
    expect(checkLockLease(10_001, resolved)).toBe(10_001);
    // Twice the period, but 10 000 - 5 000 leaves no time before the first heartbeat is due.
    const error = expectCode(() => checkLockLease(10_000, resolved), 'LEASE_TOO_SHORT');
    expect(error.message).toContain('safetyMargin (5000 ms)');
  });
});
