import { describe, expect, it } from '@jest/globals';
import { watchEventOf } from '../../src/cli/watch-command.js';

describe('showing locks', () => {
  it('names what a watch saw', () => {
    const lock = (ownerName: string) => ({
      partitionKey: 'k',
      sortKey: undefined,
      ownerName,
      recordVersionNumber: 'r',
      leaseDuration: 1,
      isReleased: false,
      data: undefined,
    });
    expect(watchEventOf(undefined, undefined, true)).toBe('free');
    expect(watchEventOf(undefined, lock('a'), true)).toBe('held');
    expect(watchEventOf(undefined, lock('a'), false)).toBe('acquired');
    expect(watchEventOf(lock('a'), lock('a'), false)).toBe('heartbeat');
    expect(watchEventOf(lock('a'), lock('b'), false)).toBe('acquired');
    expect(watchEventOf(lock('a'), undefined, false)).toBe('free');
  });
});
