import { describe, expect, it } from '@jest/globals';
import { formatDuration, parseDuration } from '../../src/cli/durations.js';
import { UsageError } from '../../src/cli/usage-error.js';

describe('durations', () => {
  it.each([
    ['5', 5_000],
    ['1.5', 1_500],
    ['0.25', 250],
    ['500ms', 500],
    ['20s', 20_000],
    ['1.5s', 1_500],
    ['2m', 120_000],
    ['1h', 3_600_000],
  ])('%s is %d ms (a bare number is seconds, as for timeout(1) and flock -w)', (text, ms) => {
    expect(parseDuration('lease', text)).toBe(ms);
  });

  it.each(['', '0', '-5', '0.0001', '1.5ms', '10 minutes', '5d', 's'])('%j is refused with a UsageError naming the flag', (text) => {
    expect(() => parseDuration('lease', text)).toThrow(UsageError);
    expect(() => parseDuration('lease', text)).toThrow(/--lease/);
  });

  it('reads back for people', () => {
    expect([250, 1_000, 1_500, 20_000, 300_000, 2_160_000_000].map(formatDuration)).toEqual([
      '250 ms',
      '1 s',
      '1.5 s',
      '20 s',
      '5 min',
      '600 h',
    ]);
  });
});
