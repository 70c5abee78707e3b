/**
 * LateTakeover: the one takeover an acquisition still sends once its wait
 * has run out. Fake timers drive performance.now(), so `systemClock` moves
 * with them.
 */
import { describe, expect, it } from '@jest/globals';
import { AcquireDeadline } from '../../src/acquire/acquire-deadline.js';
import { LateTakeover } from '../../src/acquire/late-takeover.js';
import { StaleWatch } from '../../src/acquire/stale-watch.js';
import { systemClock } from '../../src/base/clock.js';
import type { LockObservation } from '../../src/dynamodb/read-lock.js';
import { useFakeTime } from '../../test-kit/jest/fake-time.js';

const { advanceTo } = useFakeTime();
const LEASE = 1_000;

/** A watch timing `owner`'s RVN from `observedAt`. */
function watching(owner: string, observedAt: number): StaleWatch {
  const watch = new StaleWatch();
  const record = { partitionKey: 'k', ownerName: owner, recordVersionNumber: `${owner}-rvn`, leaseDurationMs: LEASE, isReleased: false };
  watch.observe({ record, observedAt } as unknown as LockObservation);
  return watch;
}

describe('LateTakeover', () => {
  it('is due once every timed lock has gone stale, and only once', async () => {
    using deadline = new AcquireDeadline({ clock: systemClock, waitMs: 0, graceMs: 5_000 });
    const late = new LateTakeover();
    const watches = [watching('a', 0), watching('b', 500), new StaleWatch()];
    await advanceTo(1_001);
    expect(late.claim(deadline, watches, performance.now())).toBe(false); // b is not stale yet
    await advanceTo(1_501);
    expect(late.claim(deadline, watches, performance.now())).toBe(true);
    expect(late.claim(deadline, watches, performance.now())).toBe(false);
  });

  it('is never due with nothing timed, after a takeover of the call, or past the cut-off', async () => {
    using deadline = new AcquireDeadline({ clock: systemClock, waitMs: 0, graceMs: 2_000 });
    await advanceTo(1_500);
    expect(new LateTakeover().claim(deadline, [new StaleWatch()], performance.now())).toBe(false);
    const afterTakeover = new LateTakeover();
    afterTakeover.sent();
    expect(afterTakeover.claim(deadline, [watching('a', 0)], performance.now())).toBe(false);
    await advanceTo(2_000);
    expect(new LateTakeover().claim(deadline, [watching('a', 0)], performance.now())).toBe(false);
  });
});
