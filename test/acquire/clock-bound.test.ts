/**
 * The bounded-clock takeover decision (clock-bound.ts) and its place in the
 * stale timer: a stamp naming the item's RVN and older than the lease plus
 * twice the skew on our wall clock proves the lease over at once; anything
 * else leaves Java's rule.
 */
import { describe, expect, it } from '@jest/globals';
import { ClockBound } from '../../src/acquire/clock-bound.js';
import { StaleWatch, TAKEOVER_MARGIN_MS } from '../../src/acquire/stale-watch.js';
import type { LockObservation } from '../../src/dynamodb/read-lock.js';
import type { LockRecord } from '../../src/protocol/index.js';

const HOUR = 3_600_000;
const WALL = 1_764_000_000_000;

/** A clock whose monotonic and wall readings the test sets. */
function testClock(now = 0, wall = WALL) {
  const clock = { mono: now, wall, now: () => clock.mono, wallNow: () => clock.wall };
  return clock;
}

const held = (writtenAt: number | undefined, leaseDurationMs = 20_000): LockRecord => ({
  partitionKey: 'k',
  sortKey: undefined,
  ownerName: 'holder',
  leaseDurationMs,
  recordVersionNumber: 'rvn-1',
  isReleased: false,
  data: undefined,
  additionalAttributes: {},
  ...(writtenAt === undefined ? {} : { writtenAt }),
});

describe('ClockBound', () => {
  it('proves a lock stamped an hour ago expired at once', () => {
    const bound = new ClockBound(500, testClock());
    expect(bound.provesExpired(held(WALL - HOUR))).toBe(true);
  });

  it('proves it only once the stamp is strictly older than lease + 2 × maxSkew on our wall clock', () => {
    const clock = testClock();
    const bound = new ClockBound(500, clock);
    const record = held(WALL - 20_000 - 1_000);
    expect(bound.provesExpired(record)).toBe(false); // exactly lease + 2 × skew old
    clock.wall += 1;
    expect(bound.provesExpired(record)).toBe(true);
    // lease + one skew is not enough: the writer's clock may be ahead and ours behind.
    expect(bound.provesExpired(held(clock.wall - 20_000 - 501))).toBe(false);
  });

  it('proves nothing without a stamp, for a released item, or for a stamp from our future', () => {
    const bound = new ClockBound(0, testClock());
    expect(bound.provesExpired(held(undefined))).toBe(false);
    expect(bound.provesExpired({ ...held(WALL - HOUR), isReleased: true })).toBe(false);
    expect(bound.provesExpired(held(WALL + HOUR))).toBe(false);
  });

  it('names the monotonic instant the stamp will prove it, re-read from the wall clock each time', () => {
    const clock = testClock(1_000);
    const bound = new ClockBound(100, clock);
    const record = held(WALL - 5_000);
    // 20 000 + 200 − 5 000 ms to go, plus the margin.
    expect(bound.proofAt(record, 1)).toBe(1_000 + 15_201);
    expect(bound.proofAt(held(WALL - HOUR), 1)).toBe(1_000);
    expect(bound.proofAt(held(undefined), 1)).toBe(Infinity);
    clock.wall -= 10_000; // stepped back: the instant moves later, never into a loop of early wake-ups
    expect(bound.proofAt(record, 1)).toBe(1_000 + 25_201);
  });
});

describe('StaleWatch with a clock bound', () => {
  const observed = (record: LockRecord, observedAt: number): LockObservation => ({ record, observedAt });

  it('is stale at once on a lock whose holder was killed an hour ago, and the takeover is due now', () => {
    const clock = testClock(50);
    const watch = new StaleWatch(new ClockBound(500, clock));
    watch.observe(observed(held(WALL - HOUR), 50));
    expect(watch.isStale(50)).toBe(true);
    expect(watch.takeoverAt()).toBe(50);
  });

  it('without a valid stamp keeps Java’s rule: the full lease on the monotonic clock', () => {
    const clock = testClock(50);
    const watch = new StaleWatch(new ClockBound(500, clock));
    watch.observe(observed(held(undefined), 50));
    expect(watch.isStale(50)).toBe(false);
    expect(watch.takeoverAt()).toBe(50 + 20_000 + TAKEOVER_MARGIN_MS);
    expect(watch.isStale(50 + 20_001)).toBe(true);
  });

  it('with a recent stamp waits for whichever rule proves the lease over first', () => {
    const clock = testClock(0);
    const watch = new StaleWatch(new ClockBound(1_000, clock));
    watch.observe(observed(held(WALL - 19_000), 0));
    expect(watch.isStale(0)).toBe(false);
    // The stamp proves it 20 000 + 2 000 − 19 000 = 3 000 ms from now, well before the watched lease.
    expect(watch.takeoverAt()).toBe(3_000 + TAKEOVER_MARGIN_MS);
    clock.mono = clock.wall - WALL + 3_001;
    clock.wall += 3_001;
    expect(watch.isStale(clock.mono)).toBe(true);
  });

  it('without the option ignores stamps', () => {
    const watch = new StaleWatch();
    watch.observe(observed(held(WALL - HOUR), 50));
    expect(watch.isStale(50)).toBe(false);
    expect(watch.takeoverAt()).toBe(50 + 20_000 + TAKEOVER_MARGIN_MS);
  });
});
