import { describe, expect, it } from '@jest/globals';
import { HeartbeatBatchSize } from '../../src/hold/heartbeat-batch-size.js';

const SLOW_MS = 200;

describe('HeartbeatBatchSize', () => {
  it('starts at four and doubles on fast full batches up to the configured size', () => {
    const size = new HeartbeatBatchSize(25, SLOW_MS);
    const seen = [size.current];
    for (let i = 0; i < 4; i++) {
      size.answered(size.current, 10);
      seen.push(size.current);
    }
    expect(seen).toEqual([4, 8, 16, 25, 25]);
  });

  it('never exceeds a configured size below four', () => {
    expect(new HeartbeatBatchSize(3, SLOW_MS).current).toBe(3);
  });

  it('grows only on full batches: a part-full batch says nothing about a larger one', () => {
    const size = new HeartbeatBatchSize(25, SLOW_MS);
    size.answered(2, 10);
    expect(size.current).toBe(4);
  });

  it('halves on a slow batch, then grows by one at a time', () => {
    const size = new HeartbeatBatchSize(25, SLOW_MS);
    size.answered(4, 10);
    size.answered(8, 10);
    expect(size.current).toBe(16);
    size.answered(16, SLOW_MS + 1);
    expect(size.current).toBe(8);
    size.answered(8, 10);
    expect(size.current).toBe(9);
  });

  it('keeps its size on a batch neither fast nor slow', () => {
    const size = new HeartbeatBatchSize(25, SLOW_MS);
    size.answered(4, SLOW_MS * 0.75);
    expect(size.current).toBe(4);
  });

  it('halves on an unanswered batch, but never below two', () => {
    const size = new HeartbeatBatchSize(25, SLOW_MS);
    size.unanswered(4);
    expect(size.current).toBe(2);
    size.unanswered(2);
    expect(size.current).toBe(2);
  });

  it('a slow batch sent before a shrink does not grow the size back', () => {
    const size = new HeartbeatBatchSize(25, SLOW_MS);
    size.answered(4, 10);
    size.answered(8, 10); // 16
    size.unanswered(16); // 8
    size.answered(16, SLOW_MS + 1); // sent before the shrink: halves from what it was, never above now
    expect(size.current).toBe(8);
  });
});
