import { describe, expect, it } from '@jest/globals';
import { MalformedLockItemError } from '../../src/base/errors.js';
import { firstLook, isUnchanged, judgeFailedDelete, standStillAt, type FirstLookRules } from '../../src/gc/judge.js';
import type { LockItem } from '../../src/protocol/index.js';

const SCHEMA = { partitionKeyName: 'key' };
const RULES: FirstLookRules = { isHeldHere: (lock) => lock.ownerName === 'me', maxLeaseMs: 60_000 };

const item = (key: string, owner: string, rvn: string, leaseMs = 1_000, extra: LockItem = {}): LockItem => ({
  key: { S: key },
  ownerName: { S: owner },
  leaseDuration: { S: String(leaseMs) },
  recordVersionNumber: { S: rvn },
  ...extra,
});

/** An error as the AWS SDK throws it after `attempts` sends. */
function sdkError(name: string, status: number, attempts: number, extra: Record<string, unknown> = {}): Error {
  return Object.assign(new Error(name), { name, $metadata: { httpStatusCode: status, attempts }, ...extra });
}

describe('firstLook', () => {
  it('watches an item of someone else, held or released, from the instant its page arrived', () => {
    expect(firstLook(SCHEMA, item('a', 'other', 'r1'), 500, RULES)).toEqual({
      watch: {
        lock: {
          partitionKey: 'a',
          sortKey: undefined,
          ownerName: 'other',
          recordVersionNumber: 'r1',
          leaseDurationMs: 1_000,
          isReleased: false,
        },
        observedAt: 500,
      },
    });
    const released = firstLook(SCHEMA, item('a', 'other', 'r1', 1_000, { isReleased: { S: '1' } }), 500, RULES);
    expect('watch' in released && released.watch.lock.isReleased).toBe(true);
  });

  it('leaves an item held here, one over the lease cap, and a malformed one (with its error)', () => {
    expect(firstLook(SCHEMA, item('a', 'me', 'r1'), 0, RULES)).toEqual({
      left: { reason: 'held-here', lock: expect.objectContaining({ partitionKey: 'a' }) },
    });
    expect(firstLook(SCHEMA, item('a', 'other', 'r1', 60_001), 0, RULES)).toEqual({
      left: { reason: 'lease-over-cap', lock: expect.objectContaining({ leaseDurationMs: 60_001 }) },
    });
    const malformed = { key: { S: 'a' }, ownerName: { S: 'other' }, leaseDuration: { S: '1000' } };
    const look = firstLook(SCHEMA, malformed, 0, RULES);
    expect(look).toEqual({ left: { reason: 'malformed', item: malformed, error: expect.any(MalformedLockItemError) } });
  });

  it('lets an error that is not about the item through', () => {
    const rules: FirstLookRules = {
      ...RULES,
      isHeldHere: () => {
        throw new TypeError('boom');
      },
    };
    expect(() => firstLook(SCHEMA, item('a', 'other', 'r1'), 0, rules)).toThrow(TypeError);
  });
});

describe('standStillAt', () => {
  it('is strictly past the lease counted from the observation, as a Java waiter takes over', () => {
    const watched = {
      lock: { partitionKey: 'a', ownerName: 'o', recordVersionNumber: 'r', leaseDurationMs: 1_000, isReleased: false },
      observedAt: 250,
    };
    expect(standStillAt(watched)).toBeGreaterThan(1_250);
    expect(standStillAt(watched)).toBeLessThan(1_260);
  });
});

describe('isUnchanged', () => {
  const look = firstLook(SCHEMA, item('a', 'other', 'r1'), 0, RULES);
  if (!('watch' in look)) throw new Error('expected a watched item');
  const watched = look.watch;

  it('is true for the same RVN and owner, released since or not', () => {
    expect(isUnchanged(SCHEMA, watched, item('a', 'other', 'r1'))).toBe(true);
    expect(isUnchanged(SCHEMA, watched, item('a', 'other', 'r1', 1_000, { isReleased: { S: '1' } }))).toBe(true);
  });

  it('is false for a new RVN, another owner with the same RVN, or an item that no longer decodes', () => {
    expect(isUnchanged(SCHEMA, watched, item('a', 'other', 'r2'))).toBe(false);
    expect(isUnchanged(SCHEMA, watched, item('a', 'thief', 'r1'))).toBe(false);
    expect(isUnchanged(SCHEMA, watched, { key: { S: 'a' }, ownerName: { S: 'other' }, recordVersionNumber: { S: 'r1' } })).toBe(false);
  });
});

describe('judgeFailedDelete', () => {
  const conditionFailed = (attempts: number, current?: LockItem): Error =>
    sdkError('ConditionalCheckFailedException', 400, attempts, current === undefined ? {} : { Item: current });

  it('a retry that finds the item gone: the first attempt may have deleted it, so it counts as deleted', () => {
    expect(judgeFailedDelete(conditionFailed(2))).toBe('deleted');
  });

  it('the only attempt finding the item gone: someone else removed it', () => {
    expect(judgeFailedDelete(conditionFailed(1))).toBe('gone');
  });

  it('an item there with another RVN: taken, after one attempt or a retry', () => {
    expect(judgeFailedDelete(conditionFailed(1, item('a', 'other', 'r2')))).toBe('taken');
    expect(judgeFailedDelete(conditionFailed(3, item('a', 'thief', 'r3')))).toBe('taken');
  });

  it('no answer, a server error, or a refusal of the request itself: failed', () => {
    expect(judgeFailedDelete(sdkError('InternalServerError', 500, 4))).toBe('failed');
    expect(judgeFailedDelete(sdkError('AccessDeniedException', 400, 1))).toBe('failed');
    expect(judgeFailedDelete(new DOMException('no answer', 'TimeoutError'))).toBe('failed');
  });
});
