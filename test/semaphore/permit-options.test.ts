import { describe, expect, it } from '@jest/globals';
import { InvalidArgumentError } from '../../src/base/errors.js';
import { MAX_PERMITS, resolvePermitOptions } from '../../src/semaphore/permit-options.js';

describe('resolvePermitOptions', () => {
  it('fills in the waits of acquireLock', () => {
    expect(resolvePermitOptions({ permits: 3, count: 1 }, false)).toMatchObject({ refreshPeriod: 1_000, additionalTimeToWaitForLock: 1_000 });
  });

  it('takes 1 to MAX_PERMITS permits, and a count from 1 to the permits and to one transaction’s keys', () => {
    for (const permits of [0, -1, 1.5, MAX_PERMITS + 1, '3', undefined]) {
      expect(() => resolvePermitOptions({ permits: permits as number, count: 1 }, false)).toThrow(/permits must be a whole number/);
    }
    expect(() => resolvePermitOptions({ permits: 3, count: 4 }, false)).toThrow(/count .* from 1 to 3/);
    expect(() => resolvePermitOptions({ permits: 3, count: 0 }, false)).toThrow(InvalidArgumentError);
    expect(() => resolvePermitOptions({ permits: 200, count: 101 }, false)).toThrow(/from 1 to 100/);
    expect(() => resolvePermitOptions({ permits: 200, count: 51 }, true)).toThrow(/fenced.*from 1 to 50/);
    expect(resolvePermitOptions({ permits: MAX_PERMITS, count: 100 }, false).count).toBe(100);
  });

  it('refuses a refreshPeriod under 10 ms, as acquireLock does: rounds without a pause would read the permits without end', () => {
    for (const refreshPeriod of [0, 5, 9]) {
      expect(() => resolvePermitOptions({ permits: 3, count: 1, refreshPeriod }, false)).toThrow(/refreshPeriod must be .* ≥ 10/);
    }
    expect(resolvePermitOptions({ permits: 3, count: 1, refreshPeriod: 10 }, false).refreshPeriod).toBe(10);
  });

  it('refuses additionalAttributes that would write the permits attribute', () => {
    const refused = (): unknown => resolvePermitOptions({ permits: 3, count: 1, additionalAttributes: { semaphorePermits: 9 } }, false);
    expect(refused).toThrow(InvalidArgumentError);
    expect(refused).toThrow(/semaphorePermits is written by the semaphore itself/);
  });
});
