import { describe, expect, it } from '@jest/globals';
import { attemptBoundMs, batchAttemptBoundMs, retryBackoffMs } from '../../src/heartbeat/heartbeat-tuning.js';

const PERIOD = 5_000;

describe('attemptBoundMs', () => {
  it('leaves a retry a third of the safe time, so that a request stuck on a dead connection costs two thirds at most', () => {
    expect(attemptBoundMs(PERIOD, 13_500, 20)).toBe(9_000);
    // No round trip measured yet: a new client's first heartbeat.
    expect(attemptBoundMs(400, 1_500, 0)).toBe(1_000);
  });

  it('leaves a retry more where slow replies of late say it needs more: its longest first backoff and two slow round trips', () => {
    expect(attemptBoundMs(400, 1_500, 300)).toBe(1_500 - 80 - 600);
  });

  it('is not one period: a reply later than a period is waited for while the safe time allows it', () => {
    expect(attemptBoundMs(750, 1_950, 20)).toBe(1_300);
  });

  it('gives an attempt all of the safe time when it does not hold a retry and as much before it', () => {
    expect(attemptBoundMs(750, 1_800, 750)).toBe(1_800);
    expect(attemptBoundMs(PERIOD, 150, 0)).toBe(150);
  });
});

describe('batchAttemptBoundMs', () => {
  it('leaves each lock the room a lone retry needs, as a lone attempt does while the safe time holds a retry', () => {
    expect(batchAttemptBoundMs(PERIOD, 13_500, 20)).toBe(attemptBoundMs(PERIOD, 13_500, 20));
    expect(batchAttemptBoundMs(400, 1_500, 300)).toBe(1_500 - 80 - 600);
  });

  it('never gives a batch all of the safe time, which a lone attempt gets as its last resort', () => {
    expect(attemptBoundMs(750, 1_800, 750)).toBe(1_800);
    expect(batchAttemptBoundMs(750, 1_800, 750)).toBe(1_800 - 150 - 1_500);
    expect(batchAttemptBoundMs(750, 1_500, 750)).toBeLessThan(0);
  });
});

describe('retryBackoffMs', () => {
  const transient = (failures: number, random = 0): { failures: number; transient: boolean; random: number } => ({
    failures,
    transient: true,
    random,
  });

  it('starts at a tenth of a period, at most 100 ms, doubles with each failure and is randomized up to twice that', () => {
    expect([1, 2, 3].map((failures) => retryBackoffMs(PERIOD, transient(failures), 10_000, 20))).toEqual([100, 200, 400]);
    expect(retryBackoffMs(PERIOD, transient(1, 0.5), 10_000, 20)).toBe(150);
    expect(retryBackoffMs(500, transient(1), 10_000, 20)).toBe(50);
  });

  it('never waits longer than a quarter of a period or a second, which a failure that is not transient waits', () => {
    expect(retryBackoffMs(PERIOD, transient(10, 0.9), 10_000, 20)).toBe(1_000);
    expect(retryBackoffMs(PERIOD, { failures: 1, transient: false, random: 0 }, 10_000, 20)).toBe(1_000);
    expect(retryBackoffMs(2_000, { failures: 1, transient: false, random: 0 }, 10_000, 20)).toBe(500);
  });

  it('starts the next attempt while it still has two round trips of safe time, at once if it has no more', () => {
    expect(retryBackoffMs(PERIOD, transient(4), 700, 200)).toBe(300);
    expect(retryBackoffMs(PERIOD, transient(1), 300, 200)).toBe(0);
  });
});
