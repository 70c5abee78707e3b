import { beforeEach, describe, expect, it } from '@jest/globals';
import { HeartbeatBatchPace } from '../../src/heartbeat/heartbeat-batch-pace.js';

const PERIOD_MS = 800;
/** A quarter of the period. */
const SLOW_MS = 200;
/** How long the longest-waiting due heartbeat has waited to be sent: none, or a whole period for a call. */
const SPARE = 0;
const CROWDED = PERIOD_MS;

let now = 0;
const clock = { now: (): number => now };

beforeEach(() => {
  now = 0;
});

describe('HeartbeatBatchPace', () => {
  it('starts at four and doubles on fast full batches up to the configured size', () => {
    const size = new HeartbeatBatchPace(25, PERIOD_MS, clock);
    const seen = [size.size];
    for (let i = 0; i < 4; i++) {
      size.answered(size.size, 10, SPARE);
      seen.push(size.size);
    }
    expect(seen).toEqual([4, 8, 16, 25, 25]);
  });

  it('never exceeds a configured size below four', () => {
    expect(new HeartbeatBatchPace(3, PERIOD_MS, clock).size).toBe(3);
  });

  it('grows only on full batches: a part-full batch says nothing about a larger one', () => {
    const size = new HeartbeatBatchPace(25, PERIOD_MS, clock);
    size.answered(2, 10, SPARE);
    expect(size.size).toBe(4);
  });

  it('halves on a slow batch, then grows by one at a time', () => {
    const size = new HeartbeatBatchPace(25, PERIOD_MS, clock);
    size.answered(4, 10, SPARE);
    size.answered(8, 10, SPARE);
    expect(size.size).toBe(16);
    size.answered(16, SLOW_MS + 1, SPARE);
    expect(size.size).toBe(8);
    size.answered(8, 10, SPARE);
    expect(size.size).toBe(9);
  });

  it('estimates the round trip from answered batches only', () => {
    const pace = new HeartbeatBatchPace(25, PERIOD_MS, clock);
    expect(pace.roundTrip.estimate()).toBe(0);
    pace.unanswered(4);
    expect(pace.roundTrip.estimate()).toBe(0);
    pace.answered(2, 120, SPARE);
    expect(pace.roundTrip.estimate()).toBe(120);
  });

  it('keeps its size on a batch neither fast nor slow', () => {
    const size = new HeartbeatBatchPace(25, PERIOD_MS, clock);
    size.answered(4, SLOW_MS * 0.75, SPARE);
    expect(size.size).toBe(4);
  });

  it('halves on an unanswered batch, but never below two', () => {
    const size = new HeartbeatBatchPace(25, PERIOD_MS, clock);
    size.unanswered(4);
    expect(size.size).toBe(2);
    size.unanswered(2);
    expect(size.size).toBe(2);
  });

  it('a slow batch sent before a shrink does not grow the size back', () => {
    const size = new HeartbeatBatchPace(25, PERIOD_MS, clock);
    size.answered(4, 10, SPARE);
    size.answered(8, 10, SPARE); // 16
    size.unanswered(16); // 8
    size.answered(16, SLOW_MS + 1, SPARE); // sent before the shrink: halves from what it was, never above now
    expect(size.size).toBe(8);
  });
});

describe('HeartbeatBatchPace while due heartbeats wait for a call', () => {
  /** Slow, yet within half a period. */
  const SLOW_EVERY_REQUEST_MS = 350;

  it('grows a full batch by one if it was answered within half a period and as soon as the smallest, however slow', () => {
    const size = new HeartbeatBatchPace(25, PERIOD_MS, clock);
    size.answered(2, SLOW_EVERY_REQUEST_MS, CROWDED);
    size.answered(4, SLOW_EVERY_REQUEST_MS, CROWDED);
    expect(size.size).toBe(5);
  });

  it('grows from the first size when no smaller batch was ever answered', () => {
    const size = new HeartbeatBatchPace(25, PERIOD_MS, clock);
    for (let i = 0; i < 4; i++) size.answered(size.size, SLOW_EVERY_REQUEST_MS, CROWDED);
    expect(size.size).toBe(8);
  });

  it('does not grow a batch that took longer than the smallest: there each statement costs its time', () => {
    const size = new HeartbeatBatchPace(25, PERIOD_MS, clock);
    size.answered(2, 100, CROWDED);
    size.answered(4, 200, CROWDED);
    expect(size.size).toBe(4);
  });

  it('keeps its size on a slow part-full batch', () => {
    const size = new HeartbeatBatchPace(25, PERIOD_MS, clock);
    size.answered(2, SLOW_EVERY_REQUEST_MS, CROWDED);
    expect(size.size).toBe(4);
  });

  it('does not grow on a batch answered later than half a period', () => {
    const size = new HeartbeatBatchPace(25, PERIOD_MS, clock);
    size.answered(4, PERIOD_MS / 2 + 1, CROWDED);
    expect(size.size).toBe(4);
  });

  it('halves a batch answered close to the bound of its attempt, whatever made it slow', () => {
    const size = new HeartbeatBatchPace(25, PERIOD_MS, clock);
    size.answered(4, PERIOD_MS * 0.75 + 1, CROWDED);
    expect(size.size).toBe(2);
  });

  it('counts heartbeats as waiting for a call for a period after an answer found them so: the first answers free calls', () => {
    const size = new HeartbeatBatchPace(25, PERIOD_MS, clock);
    size.answered(4, SLOW_EVERY_REQUEST_MS, CROWDED);
    size.answered(5, SLOW_EVERY_REQUEST_MS, SPARE);
    expect(size.size).toBe(6);
    now += PERIOD_MS + 1;
    size.answered(6, SLOW_EVERY_REQUEST_MS, SPARE);
    expect(size.size).toBe(3);
  });

  it('a wait for a fuller batch, or a timer late by a little, is not a wait for a call', () => {
    const size = new HeartbeatBatchPace(25, PERIOD_MS, clock);
    size.answered(4, SLOW_EVERY_REQUEST_MS, PERIOD_MS / 50 + 5);
    expect(size.size).toBe(2);
  });

  it('measures the smallest batches afresh once their round trip is a period old: the server may since be slow for every request', () => {
    const pace = new HeartbeatBatchPace(25, PERIOD_MS, clock);
    // A quiet start, batches of 4, 8 and 16 answered at once: 25. Then a burst of other work halves them.
    for (const sent of [4, 8, 16]) pace.answered(sent, 10, SPARE);
    pace.answered(25, SLOW_MS + 1, SPARE);
    expect(pace.size).toBe(12);
    // From now on every batch takes as long whatever it holds (a queue in front of the server), and due heartbeats wait for a call.
    const sizes: number[] = [];
    for (let i = 0; i < 40; i++) {
      now += PERIOD_MS / 10;
      const sent = pace.size;
      sizes.push(sent);
      pace.sending(sent);
      pace.answered(sent, SLOW_EVERY_REQUEST_MS, CROWDED);
    }
    // A batch of the smallest size once their round trip is more than a period old (here after the 11th answer), at
    // most one a period, to measure it again; growth by one after it, up to the configured size.
    const remeasured = sizes.flatMap((sent, i) => (sent === 4 ? [i] : []));
    expect(remeasured[0]).toBe(11);
    for (let i = 1; i < remeasured.length; i++) expect((remeasured[i] as number) - (remeasured[i - 1] as number)).toBeGreaterThan(10);
    expect(sizes.slice(0, 11).every((sent) => sent === 12)).toBe(true);
    expect(sizes.slice(-10).every((sent) => sent === 25)).toBe(true);
  });

  it('on a server slow for every request, batches halved while calls were to spare grow back once heartbeats wait', () => {
    const size = new HeartbeatBatchPace(25, PERIOD_MS, clock);
    size.answered(4, SLOW_EVERY_REQUEST_MS, SPARE);
    expect(size.size).toBe(2);
    for (let i = 0; i < 10; i++) size.answered(size.size, SLOW_EVERY_REQUEST_MS, CROWDED);
    expect(size.size).toBe(12);
  });
});
