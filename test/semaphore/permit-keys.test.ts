import { describe, expect, it } from '@jest/globals';
import { InvalidArgumentError } from '../../src/base/errors.js';
import { checkSemaphoreName, permitKey, permitKeys, permitsWrittenOn } from '../../src/semaphore/permit-keys.js';
import type { LockRecord } from '../../src/protocol/index.js';

const record = (additionalAttributes: LockRecord['additionalAttributes']): LockRecord => ({
  partitionKey: 'exports#permit-1',
  ownerName: 'a',
  leaseDurationMs: 1_000,
  recordVersionNumber: 'r1',
  isReleased: false,
  data: undefined,
  additionalAttributes,
});

describe('permit keys', () => {
  it('are NAME#permit-1 to NAME#permit-N, with the caller’s sort key', () => {
    expect(permitKey('exports', 2, undefined)).toEqual({ partitionKey: 'exports#permit-2', sortKey: undefined });
    expect(permitKeys('gpus', 3, 'eu').map((key) => [key.partitionKey, key.sortKey])).toEqual([
      ['gpus#permit-1', 'eu'],
      ['gpus#permit-2', 'eu'],
      ['gpus#permit-3', 'eu'],
    ]);
  });

  it('refuse a name that is not a non-empty string', () => {
    expect(() => checkSemaphoreName('')).toThrow(InvalidArgumentError);
    expect(() => checkSemaphoreName(3)).toThrow(/non-empty string/);
    expect(() => checkSemaphoreName('ok')).not.toThrow();
  });
});

describe('permitsWrittenOn', () => {
  it('reads the N a permit carries, as a number or as the decimal text a Java joiner may write', () => {
    expect(permitsWrittenOn(record({ semaphorePermits: 3 }))).toBe(3);
    expect(permitsWrittenOn(record({ semaphorePermits: '12' }))).toBe(12);
  });

  it('is undefined on a permit without it, and NaN on one whose value is no whole number of permits', () => {
    expect(permitsWrittenOn(record({}))).toBeUndefined();
    for (const value of [0, -1, 2.5, '03', 'three', true, [3]]) expect(permitsWrittenOn(record({ semaphorePermits: value }))).toBeNaN();
  });
});
