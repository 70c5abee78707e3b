/** `collectAbandoned` on a table with a sort key: items are told apart, and deleted, by both keys. */
import { describe, expect, it } from '@jest/globals';
import { PutItemCommand } from '@aws-sdk/client-dynamodb';
import { randomUUID } from 'node:crypto';
import { useLockTestBed } from '../../test-kit/jest/lock-test-bed-hook.js';

const LEASE_MS = 1_000;
const bed = useLockTestBed('gc-sort-key', { sortKeyName: 'sk' });

describe('collectAbandoned with a sort key', () => {
  it('deletes the abandoned item and leaves the live one that shares its partition key', async () => {
    await bed.raw.send(
      new PutItemCommand({
        TableName: bed.tableName,
        Item: {
          ...bed.key('tenant-1', 'abandoned'),
          ownerName: { S: 'java-host' },
          leaseDuration: { S: String(LEASE_MS) },
          recordVersionNumber: { S: randomUUID() },
        },
      }),
    );
    // The live lock's own lease is longer: a busy CI machine's event loop must not make it lapse while
    // the collector watches the abandoned one for its lease.
    const holder = bed.client({ ownerName: 'alive', leaseDuration: 3_000, heartbeatPeriod: 300 });
    await holder.acquireLock('tenant-1', { sortKey: 'held' });

    const collector = bed.client({ ownerName: 'collector', leaseDuration: LEASE_MS, heartbeatPeriod: 200 });
    const report = await collector.collectAbandoned();
    expect(report.deleted).toEqual([expect.objectContaining({ partitionKey: 'tenant-1', sortKey: 'abandoned' })]);
    expect(report.left).toEqual([{ reason: 'moved', lock: expect.objectContaining({ partitionKey: 'tenant-1', sortKey: 'held' }) }]);
    expect(await bed.item('tenant-1', 'abandoned')).toBeUndefined();
    expect(holder.hasLock('tenant-1', { sortKey: 'held' })).toBe(true);
  });
});
