/**
 * SharedDeadlines with fake timers (they drive performance.now too, so the
 * monotonic clock moves with them).
 */
import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { afterEach, beforeEach, describe, expect, it, jest } from '@jest/globals';
import { systemClock } from '../../src/base/clock.js';
import { SharedDeadlines } from '../../src/heartbeat/shared-deadlines.js';

beforeEach(() => {
  jest.useFakeTimers();
});

afterEach(() => {
  jest.useRealTimers();
});

/** Milliseconds from now until `signal` aborts, stepping 1 ms at a time. */
async function msUntilAborted(signal: AbortSignal, limit: number): Promise<number> {
  for (let elapsed = 0; elapsed <= limit; elapsed++) {
    if (signal.aborted) return elapsed;
    await jest.advanceTimersByTimeAsync(1);
  }
  throw new Error(`not aborted within ${limit} ms`);
}

describe('SharedDeadlines', () => {
  it('aborts never later than asked and at most one 50 ms slot sooner, whatever the phase', async () => {
    const deadlines = new SharedDeadlines(systemClock);
    for (let phase = 0; phase < 60; phase += 7) {
      await jest.advanceTimersByTimeAsync(phase);
      const { signal } = deadlines.deadline(5_000);
      const took = await msUntilAborted(signal, 5_000);
      expect(took).toBeLessThanOrEqual(5_000);
      expect(took).toBeGreaterThan(5_000 - 50);
      expect(signal.reason).toMatchObject({ name: 'TimeoutError' });
    }
  });

  it('gives deadlines in the same slot one signal and one timer', () => {
    const deadlines = new SharedDeadlines(systemClock);
    const signals = new Set<AbortSignal>();
    for (let i = 0; i < 100; i++) signals.add(deadlines.deadline(5_000).signal);
    expect(signals.size).toBe(1);
    expect(deadlines.size).toBe(1);
    expect(jest.getTimerCount()).toBe(1);
  });

  it('drops a slot once its timer has fired', async () => {
    const deadlines = new SharedDeadlines(systemClock);
    deadlines.deadline(2_000);
    deadlines.deadline(3_000);
    expect(deadlines.size).toBe(2);
    await jest.advanceTimersByTimeAsync(2_000);
    expect(deadlines.size).toBe(1);
    await jest.advanceTimersByTimeAsync(1_000);
    expect(deadlines.size).toBe(0);
    expect(jest.getTimerCount()).toBe(0);
  });

  it('shares deadlines under a second in 5 ms slots: never later than asked, at most 5 ms sooner', async () => {
    const deadlines = new SharedDeadlines(systemClock);
    for (let phase = 0; phase < 12; phase += 3) {
      await jest.advanceTimersByTimeAsync(phase);
      const first = deadlines.deadline(300);
      expect(deadlines.deadline(300).signal).toBe(first.signal);
      const took = await msUntilAborted(first.signal, 300);
      expect(took).toBeLessThanOrEqual(300);
      expect(took).toBeGreaterThan(300 - 5);
    }
  });

  it('gives a deadline under 100 ms a signal of its own, exact to the millisecond, and clear() stops its timer', async () => {
    const deadlines = new SharedDeadlines(systemClock);
    const first = deadlines.deadline(60);
    const second = deadlines.deadline(60);
    expect(first.signal).not.toBe(second.signal);
    expect(deadlines.size).toBe(0);
    second.clear();
    expect(await msUntilAborted(first.signal, 1_000)).toBe(60);
    expect(second.signal.aborted).toBe(false);
  });

  it('lets any number of requests in flight listen to a shared signal without a leak warning', () => {
    // Jest's realm hides Node's MaxListenersExceededWarning, so this runs in a plain Node process.
    const script = `
      import { SharedDeadlines } from './src/heartbeat/shared-deadlines.ts';
      import { systemClock } from './src/base/clock.ts';
      const { signal } = new SharedDeadlines(systemClock).deadline(5_000);
      for (let i = 0; i < 64; i++) signal.addEventListener('abort', () => undefined);
      setTimeout(() => process.exit(0), 20); // Node warns on a later tick
    `;
    const run = spawnSync(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script], {
      cwd: fileURLToPath(new URL('../..', import.meta.url)),
      encoding: 'utf8',
    });
    expect(run.status).toBe(0);
    expect(run.stderr).not.toContain('MaxListenersExceededWarning');
  });
});
