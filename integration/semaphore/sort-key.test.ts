/** Semaphores on a table with a sort key: every permit of a semaphore has the caller's sort key. */
import { describe, expect, it } from '@jest/globals';
import { InvalidArgumentError, LockCurrentlyUnavailableError } from '../../src/index.js';
import { useLockTestBed } from '../../test-kit/jest/lock-test-bed-hook.js';
import { rejectionOf } from '../../test-kit/test-locks.js';

const bed = useLockTestBed('semaphore-sort-key', { sortKeyName: 'sk' });

describe('a semaphore on a table with a sort key', () => {
  it('takes permits NAME#permit-k with the sort key given, a semaphore apart from the same name under another sort key', async () => {
    const client = bed.client({ ownerName: 'worker' });
    const group = await client.acquirePermits('regions', { permits: 2, count: 2, sortKey: 'eu' });
    expect(group.locks.map((lock) => `${lock.partitionKey}/${lock.sortKey}`).sort()).toEqual(['regions#permit-1/eu', 'regions#permit-2/eu']);
    expect(await bed.owner('regions#permit-1', 'eu')).toBe('worker');

    const other = bed.client({ ownerName: 'other' });
    const full = await rejectionOf(other.acquirePermit('regions', { permits: 2, sortKey: 'eu', shouldSkipBlockingWait: true }));
    expect(full).toBeInstanceOf(LockCurrentlyUnavailableError);
    expect((await other.acquirePermit('regions', { permits: 2, sortKey: 'us' })).sortKey).toBe('us');
  });

  it('refuses a call without the sort key before any request', async () => {
    const client = bed.client({ ownerName: 'worker' });
    for (const refused of [client.acquirePermit('regions', { permits: 2 }), client.acquirePermits('regions', { permits: 2, count: 2 })]) {
      const refusal = await rejectionOf(refused);
      expect(refusal).toBeInstanceOf(InvalidArgumentError);
      expect(refusal).toMatchObject({ code: 'SORT_KEY_REQUIRED' });
    }
  });
});
