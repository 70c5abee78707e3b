/** StaleWatch: the stale timer of one waiting acquisition (PROTOCOL.md §5.4). */
import { describe, expect, it } from '@jest/globals';
import { StaleWatch, TAKEOVER_MARGIN_MS } from '../../src/acquire/stale-watch.js';
import type { LockObservation } from '../../src/dynamodb/read-lock.js';

const observation = (recordVersionNumber: string, observedAt: number, leaseDurationMs = 1_000): LockObservation => ({
  record: {
    partitionKey: 'k',
    ownerName: 'holder',
    leaseDurationMs,
    recordVersionNumber,
    isReleased: false,
    data: undefined,
    additionalAttributes: {},
  },
  observedAt,
});

describe('StaleWatch', () => {
  it('times nothing until it sees a held lock', () => {
    const watch = new StaleWatch();
    expect(watch.observation).toBeUndefined();
    expect(watch.takeoverAt()).toBe(Infinity);
    expect(watch.isStale(1e12)).toBe(false);
  });

  it('is stale only once the RVN stayed unchanged for strictly longer than its lease, from the first observation', () => {
    const watch = new StaleWatch();
    watch.observe(observation('a', 100));
    watch.observe(observation('a', 600)); // the same RVN again: the timer keeps running from 100
    expect(watch.observation?.observedAt).toBe(100);
    expect(watch.isStale(1_100)).toBe(false);
    expect(watch.isStale(1_100.5)).toBe(true);
    expect(watch.takeoverAt()).toBe(1_100 + TAKEOVER_MARGIN_MS);
    expect(watch.isStale(watch.takeoverAt())).toBe(true);
  });

  it('restarts from the observation of a new RVN (the holder heartbeated)', () => {
    const watch = new StaleWatch();
    watch.observe(observation('a', 100));
    watch.observe(observation('b', 900));
    expect(watch.isStale(1_200)).toBe(false);
    expect(watch.takeoverAt()).toBe(1_900 + TAKEOVER_MARGIN_MS);
  });

  it('uses the lease stored with the RVN being timed', () => {
    const watch = new StaleWatch();
    watch.observe(observation('a', 0, 5_000));
    expect(watch.isStale(4_000)).toBe(false);
    watch.observe(observation('b', 4_000, 200));
    expect(watch.takeoverAt()).toBe(4_200 + TAKEOVER_MARGIN_MS);
  });
});
