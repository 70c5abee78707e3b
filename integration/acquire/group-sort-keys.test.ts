/**
 * `acquireLocks` on a table with a sort key, with data, additional
 * attributes and fencing: each item a group writes is byte for byte what a
 * single acquisition writes (so a Java client sees an ordinary lock, waits
 * for it and takes it over when stale), and each lock steps its own fencing
 * counter in the group's one transaction.
 */
import { describe, expect, it } from '@jest/globals';
import type { LockClient, LockClientSettings } from '../../src/index.js';
import type { Item } from '../../test-kit/aws.js';
import { javaReadLockItem, attributeTypes } from '../../test-kit/java-items.js';
import { useLockTestBed } from '../../test-kit/jest/lock-test-bed-hook.js';
import { recording, rejectionOf, text } from '../../test-kit/test-locks.js';

const bed = useLockTestBed('group-sort-keys', { sortKeyName: 'sort' });

function client(ownerName: string, settings: Partial<LockClientSettings> = {}, dynamoDB?: Parameters<typeof bed.client>[1]): LockClient {
  return bed.client({ ownerName, leaseDuration: 2_000, heartbeatPeriod: 500, ...settings }, dynamoDB);
}

/** An item without its key and RVN: what must be equal between two acquisitions of different keys. */
function withoutKeyAndRvn(item: Item | undefined): Item {
  const { key: _key, sort: _sort, recordVersionNumber: _rvn, ...rest } = item ?? {};
  return rest;
}

// A lease far above the server's slowest answer in CI: it bounds each request of the
// acquisition, and this test is about items, not time.
const OPTIONS = { data: 'transfer 42', additionalAttributes: { team: 'payments' }, leaseDuration: 10_000 };

describe('acquireLocks with sort keys', () => {
  it('writes each item as a single acquisition writes it, and Java reads it as an ordinary lock', async () => {
    const locks = client('bank');
    const single = await locks.acquireLock('accounts', { sortKey: 'single', ...OPTIONS });
    const group = await locks.acquireLocks(
      [
        { partitionKey: 'accounts', sortKey: 'alice' },
        { partitionKey: 'accounts', sortKey: 'bob' },
      ],
      OPTIONS,
    );
    const singleItem = await bed.item('accounts', 'single');
    for (const lock of group.locks) {
      const item = await bed.item('accounts', lock.sortKey);
      expect(attributeTypes(item ?? {})).toEqual(attributeTypes(singleItem ?? {}));
      expect(withoutKeyAndRvn(item)).toEqual(withoutKeyAndRvn(singleItem));
      const java = javaReadLockItem(item ?? {}, 'key');
      expect(java).toMatchObject({
        ownerName: 'bank',
        leaseDuration: 10_000n,
        recordVersionNumber: lock.recordVersionNumber,
        isReleased: false,
      });
      expect(text(java.data)).toBe('transfer 42');
      expect(text(lock.data)).toBe('transfer 42');
      expect(lock.additionalAttributes).toEqual({ team: 'payments' });
    }
    await single.release();
    await group.release();
  });

  it('takes released items (deleteLockOnRelease: false) with the released condition', async () => {
    const keys = [
      { partitionKey: 'p', sortKey: 'a' },
      { partitionKey: 'p', sortKey: 'b' },
    ];
    const first = await client('first').acquireLocks(keys, { deleteLockOnRelease: false });
    await first.release();
    expect((await bed.item('p', 'a'))?.['isReleased']?.S).toBe('1');
    const recorder = recording(bed.dynamoDBClient('second'));
    const second = await client('second', {}, recorder.dynamoDB).acquireLocks(keys);
    const [transaction] = recorder.named('TransactWriteItemsCommand');
    const puts = (transaction?.input['TransactItems'] as { Put: { ConditionExpression: string } }[]).map((item) => item.Put.ConditionExpression);
    expect(puts).toEqual(puts.map(() => expect.stringContaining('#ir = :ir')));
    expect(await bed.owner('p', 'b')).toBe('second');
    expect((await bed.item('p', 'b'))?.['isReleased']).toBeUndefined();
    await second.release();
  });

  describe('with fencing', () => {
    const fenced = (ownerName: string): LockClient => client(ownerName, { fencingTableName: `${bed.tableName}-fence` });
    const keys = Array.from({ length: 3 }, (_, i) => ({ partitionKey: 'fenced', sortKey: `k${i}` }));

    it("steps each lock's counter in the group's transaction", async () => {
      await fenced('table-creator').createFencingTable();
      const a = fenced('a');
      const alone = await a.acquireLock('fenced', { sortKey: 'k1' });
      expect(alone.fencingToken).toBe(1n);
      await alone.release();
      const group = await a.acquireLocks(keys);
      expect(group.locks.map((lock) => lock.fencingToken)).toEqual([1n, 2n, 1n]);
      await group.release();
      const again = await fenced('b').acquireLocks(keys);
      expect(again.locks.map((lock) => lock.fencingToken)).toEqual([2n, 3n, 2n]);
    });

    it('takes at most 50 keys, two items of the transaction each', async () => {
      const error = await rejectionOf(
        fenced('too-many').acquireLocks(Array.from({ length: 51 }, (_, i) => ({ partitionKey: 'f', sortKey: `${i}` }))),
      );
      expect(error).toMatchObject({
        name: 'InvalidArgumentError',
        code: 'INVALID_GROUP',
        message: expect.stringMatching(/at most 50 keys with fencing/),
      });
    });
  });
});
