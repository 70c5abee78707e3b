/**
 * The lease of a lock bounded by the end of its holder's process: what each
 * write states from the moment it leaves, where the safe time ends, and the
 * checks of the option.
 */
import { describe, expect, it } from '@jest/globals';
import { InvalidArgumentError } from '../../src/base/errors.js';
import { LeaseEnd, leaseEndOf, type InvocationDeadline } from '../../src/hold/lease-end.js';
import { LEASE_END_DEFAULTS } from '../../src/settings/defaults.js';

describe('LeaseEnd.leaseAt', () => {
  // Deadline at 10 000 on the holder's clock, a kill overrun of 2 000, a safety margin of 500.
  const end = new LeaseEnd(10_000, 2_000, 500);

  it('states the configured lease while it ends before the deadline plus the overrun', () => {
    expect(end.leaseAt(1_000, 0)).toBe(1_000);
    expect(end.leaseAt(1_000, 11_000)).toBe(1_000);
  });

  it('states only what is left until the deadline plus the overrun, counted from the moment the write leaves', () => {
    expect(end.leaseAt(20_000, 0)).toBe(12_000);
    expect(end.leaseAt(20_000, 9_000)).toBe(3_000);
    expect(end.leaseAt(20_000, 11_999)).toBe(1);
  });

  it('never reaches past the deadline plus the overrun: a fraction of a millisecond is cut, never rounded up', () => {
    for (const now of [0.25, 4_321.5, 9_999.999, 11_998.001]) {
      const lease = end.leaseAt(20_000, now);
      expect(Number.isInteger(lease)).toBe(true);
      expect(now + lease).toBeLessThanOrEqual(12_000);
      expect(now + lease).toBeGreaterThan(12_000 - 1);
    }
  });

  it('states no lease at all once the overrun has passed, never a negative one', () => {
    expect(end.leaseAt(20_000, 12_000)).toBe(0);
    expect(end.leaseAt(20_000, 50_000)).toBe(0);
  });

  it('ends the safe time a safety margin before the deadline', () => {
    expect(end.safeUntil).toBe(9_500);
    expect(end.reason()).toMatch(/500 ms after its safe time/);
  });
});

describe('leaseEndOf', () => {
  const now = 1_000;
  const refused = (given: unknown, margin = 100): InvalidArgumentError => {
    try {
      leaseEndOf(given as InvocationDeadline, now, margin);
    } catch (error) {
      expect(error).toBeInstanceOf(InvalidArgumentError);
      return error as InvalidArgumentError;
    }
    throw new Error(`accepted ${JSON.stringify(given)}`);
  };

  it("takes Lambda's remaining time from now, with Lambda's kill overrun by default", () => {
    const end = leaseEndOf({ remainingMs: 5_000 }, now, 100);
    expect(end.deadline).toBe(6_000);
    expect(end.killOverrunMs).toBe(LEASE_END_DEFAULTS.killOverrunMs);
    expect(end.safeUntil).toBe(5_900);
  });

  it('takes a deadline on the monotonic clock as it is, and a kill overrun of its own', () => {
    const end = leaseEndOf({ at: 1_500.5, killOverrunMs: 0 }, now, 100);
    expect(end.deadline).toBe(1_500.5);
    expect(end.killOverrunMs).toBe(0);
  });

  it('refuses a malformed deadline with INVALID_DEADLINE', () => {
    for (const given of [
      undefined,
      null,
      5,
      {},
      { remainingMs: 5_000, at: 9_000 },
      { remainingMs: NaN },
      { remainingMs: Infinity },
      { at: '9000' },
    ]) {
      expect(refused(given).code).toBe('INVALID_DEADLINE');
    }
    expect(refused({ remainingMs: 2 ** 32 }).code).toBe('INVALID_DEADLINE');
  });

  it('refuses a kill overrun that is not a whole number of milliseconds', () => {
    expect(refused({ remainingMs: 5_000, killOverrunMs: -1 }).code).toBe('INVALID_DURATION');
    expect(refused({ remainingMs: 5_000, killOverrunMs: 0.5 }).code).toBe('INVALID_DURATION');
  });

  it('refuses a deadline past, or within the safety margin, with DEADLINE_TOO_SOON', () => {
    expect(refused({ remainingMs: -1 }).code).toBe('DEADLINE_TOO_SOON');
    expect(refused({ at: 999 }).code).toBe('DEADLINE_TOO_SOON');
    expect(refused({ remainingMs: 100 }, 100).code).toBe('DEADLINE_TOO_SOON');
    expect(leaseEndOf({ remainingMs: 101 }, now, 100).safeUntil).toBe(1_001);
  });
});
