import { describe, expect, it } from '@jest/globals';
import { HeartbeatBatchPace } from '../../src/hold/heartbeat-batch-pace.js';

const PERIOD_MS = 800;
/** A quarter of the period. */
const SLOW_MS = 200;

describe('HeartbeatBatchPace', () => {
  it('starts at four and doubles on fast full batches up to the configured size', () => {
    const size = new HeartbeatBatchPace(25, PERIOD_MS);
    const seen = [size.size];
    for (let i = 0; i < 4; i++) {
      size.answered(size.size, 10);
      seen.push(size.size);
    }
    expect(seen).toEqual([4, 8, 16, 25, 25]);
  });

  it('never exceeds a configured size below four', () => {
    expect(new HeartbeatBatchPace(3, PERIOD_MS).size).toBe(3);
  });

  it('grows only on full batches: a part-full batch says nothing about a larger one', () => {
    const size = new HeartbeatBatchPace(25, PERIOD_MS);
    size.answered(2, 10);
    expect(size.size).toBe(4);
  });

  it('halves on a slow batch, then grows by one at a time', () => {
    const size = new HeartbeatBatchPace(25, PERIOD_MS);
    size.answered(4, 10);
    size.answered(8, 10);
    expect(size.size).toBe(16);
    size.answered(16, SLOW_MS + 1);
    expect(size.size).toBe(8);
    size.answered(8, 10);
    expect(size.size).toBe(9);
  });

  it('estimates the round trip from answered batches only', () => {
    const pace = new HeartbeatBatchPace(25, PERIOD_MS);
    expect(pace.roundTripMs()).toBe(0);
    pace.unanswered(4);
    expect(pace.roundTripMs()).toBe(0);
    pace.answered(2, 120);
    expect(pace.roundTripMs()).toBe(120);
  });

  it('keeps its size on a batch neither fast nor slow', () => {
    const size = new HeartbeatBatchPace(25, PERIOD_MS);
    size.answered(4, SLOW_MS * 0.75);
    expect(size.size).toBe(4);
  });

  it('halves on an unanswered batch, but never below two', () => {
    const size = new HeartbeatBatchPace(25, PERIOD_MS);
    size.unanswered(4);
    expect(size.size).toBe(2);
    size.unanswered(2);
    expect(size.size).toBe(2);
  });

  it('a slow batch sent before a shrink does not grow the size back', () => {
    const size = new HeartbeatBatchPace(25, PERIOD_MS);
    size.answered(4, 10);
    size.answered(8, 10); // 16
    size.unanswered(16); // 8
    size.answered(16, SLOW_MS + 1); // sent before the shrink: halves from what it was, never above now
    expect(size.size).toBe(8);
  });
});
