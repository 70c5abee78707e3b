/**
 * The defaults: the values the options' documentation and the README state
 * (the Java client's where it has the option), exported from the package,
 * and frozen so that no caller can change them for everyone.
 */
import { describe, expect, it } from '@jest/globals';
import * as defaults from '../../src/settings/defaults.js';
import * as api from '../../src/index.js';

const {
  ACQUIRE_DEFAULTS,
  CLIENT_DEFAULTS,
  COLLECT_DEFAULTS,
  CREATE_TABLE_DEFAULTS,
  defaultHeartbeatPeriod,
  defaultSafetyMargin,
  DYNAMODB_LOCAL_DEFAULTS,
  ELECTION_DEFAULTS,
  LIST_LOCKS_DEFAULTS,
  WATCH_DEFAULTS,
  WITH_LOCK_DEFAULTS,
} = defaults;

describe('defaults', () => {
  it('are the documented values', () => {
    expect(CLIENT_DEFAULTS).toEqual({
      partitionKeyName: 'key',
      leaseDuration: 20_000,
      backgroundHeartbeats: true,
      heartbeatConcurrency: 32,
      heartbeatBatchSize: 25,
      holdLockOnServiceUnavailable: false,
      maxLockObservationCacheSize: 10_000,
      allowEventuallyConsistentGlobalTable: false,
    });
    expect(ACQUIRE_DEFAULTS).toEqual({
      refreshPeriod: 1_000,
      additionalTimeToWaitForLock: 1_000,
      replaceData: true,
      deleteLockOnRelease: true,
      turnLength: Infinity,
    });
    expect(WITH_LOCK_DEFAULTS).toEqual({ releaseTimeout: 5_000 });
    expect(LIST_LOCKS_DEFAULTS).toEqual({ consistentRead: true });
    expect(CREATE_TABLE_DEFAULTS).toEqual({ billingMode: 'PAY_PER_REQUEST', activeTimeout: 300_000 });
    expect(WATCH_DEFAULTS).toEqual({ pollInterval: 1_000 });
    expect(ELECTION_DEFAULTS).toEqual({ refreshPeriod: 500, pollInterval: 1_000, recampaign: true });
    expect(COLLECT_DEFAULTS).toEqual({ maxDuration: 600_000, maxLease: Infinity, concurrency: 8 });
    expect(DYNAMODB_LOCAL_DEFAULTS).toEqual({
      startupTimeoutMs: 60_000,
      maxAttempts: 5,
      killGraceMs: 2_000,
      java: 'java',
      optimizeFor: 'startup',
    });
  });

  it('give a client a quarter of its lease as heartbeat period, Java’s 5 s of 20 s, in whole milliseconds of at least 1', () => {
    expect(defaultHeartbeatPeriod(20_000)).toBe(5_000);
    expect(defaultHeartbeatPeriod(5_000)).toBe(1_250);
    expect(defaultHeartbeatPeriod(1_003)).toBe(250);
    expect(defaultHeartbeatPeriod(3)).toBe(1);
  });

  it('give a lock a tenth of its lease as safety margin, in whole milliseconds', () => {
    expect(defaultSafetyMargin(20_000)).toBe(2_000);
    expect(defaultSafetyMargin(15)).toBe(2);
    expect(defaultSafetyMargin(1)).toBe(0);
  });

  const objects = Object.entries(defaults).filter(([name]) => name.endsWith('_DEFAULTS'));

  it.each(objects)('%s is frozen', (_name, value) => {
    expect(Object.isFrozen(value)).toBe(true);
    expect(() => {
      (value as Record<string, unknown>)['leaseDuration'] = 1; // modules are strict: a frozen object throws
    }).toThrow(TypeError);
  });

  const packageWide = objects.filter(([name]) => name !== 'DYNAMODB_LOCAL_DEFAULTS');

  it.each(packageWide)('%s is exported from the package as the same object', (name, value) => {
    expect((api as Record<string, unknown>)[name]).toBe(value);
  });
});
