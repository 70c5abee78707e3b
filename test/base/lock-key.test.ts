/** lockId: a collision-free in-process identity for (partition key, sort key). */
import { describe, expect, it } from '@jest/globals';
import { seededRandom as prng } from '../../chaos/random.js';
import { describeLockKey, lockId, type LockKey } from '../../src/base/lock-key.js';

const key = (partitionKey: string, sortKey?: string): LockKey => (sortKey === undefined ? { partitionKey } : { partitionKey, sortKey });

describe('lockId', () => {
  it('is stable: the same key gives the same id, however the object was built', () => {
    expect(lockId({ partitionKey: 'a', sortKey: 'b' })).toBe(lockId(key('a', 'b')));
    expect(lockId({ partitionKey: 'a' })).toBe(lockId({ partitionKey: 'a', sortKey: undefined }));
  });

  it.each([
    [key('ab', 'c'), key('a', 'bc')],
    [key('a', 'b|c'), key('a|b', 'c')],
    [key('a'), key('a', '')],
    [key('a'), key('a', '-')],
    [key('a', '-'), key('a', '1:-')],
    [key('a|-'), key('a', undefined)],
    [key('1:a|-'), key('a')],
    [key('1:a'), key('a', '1:a')],
    [key('a|1:b'), key('a', 'b')],
    [key('a', 'b'), key('a|1:b')],
    [key('2:ab|-'), key('ab')],
    [key(':', '|'), key('|', ':')],
    [key('', 'a'), key('a', '')],
    [key('', ''), key('')],
    [key('x|0:'), key('x', '')],
    [key('😀'), key('\ud83d', '\ude00')],
  ])('tells %j and %j apart', (x, y) => {
    expect(lockId(x)).not.toBe(lockId(y));
  });

  it('distinguishes a partition-only key from the same partition key with any sort key', () => {
    for (const sortKey of ['', '-', 'a', '|', ':', '0:', '|-']) {
      expect(lockId(key('p', sortKey))).not.toBe(lockId(key('p')));
    }
  });

  it('is injective over thousands of random keys built from delimiter characters', () => {
    const random = prng(7);
    const alphabet = ['a', 'b', '|', ':', '-', '0', '1', '2', '😀'];
    const word = (): string => {
      const length = Math.floor(random() * 5);
      let text = '';
      for (let i = 0; i < length; i++) text += alphabet[Math.floor(random() * alphabet.length)] as string;
      return text;
    };
    const seen = new Map<string, string>();
    for (let i = 0; i < 20_000; i++) {
      const k = key(word(), random() < 0.3 ? undefined : word());
      const canonical = JSON.stringify([k.partitionKey, k.sortKey ?? null]);
      const id = lockId(k);
      const previous = seen.get(id);
      if (previous !== undefined && previous !== canonical) {
        throw new Error(`lockId collision: ${previous} and ${canonical} both give ${JSON.stringify(id)}`);
      }
      seen.set(id, canonical);
    }
    expect(seen.size).toBeGreaterThan(1_000);
  });
});

describe('describeLockKey', () => {
  it('quotes a key, with its sort key after a slash', () => {
    expect(describeLockKey({ partitionKey: 'a b' })).toBe('"a b"');
    expect(describeLockKey({ partitionKey: 'a', sortKey: '' })).toBe('"a"/""');
  });
});
