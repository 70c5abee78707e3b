/**
 * The check of the lock table's replication, against DynamoDB Local behind
 * the fault proxy, which answers DescribeTable in the server's place with
 * the description of a global table (DynamoDB Local has no replicas): an
 * eventually consistent one is refused before any lock write, a strongly
 * consistent one carries locks but no transactions, the opt-out skips the
 * check, and a refused DescribeTable names the permission.
 */
import { describe, expect, it } from '@jest/globals';
import * as sdk from '@aws-sdk/client-dynamodb';
import { LockTableReplicationError, isLockTableReplicationError, type LockClient } from '../../src/index.js';
import { createDataTable, increment } from '../../test-kit/data-table.js';
import { dynamoDBErrorReply, operationOf, type FaultProxy, type RequestFault } from '../../test-kit/fault-proxy.js';
import { useFaultBed } from '../../test-kit/jest/fault-bed.js';
import { rejectionOf, waitUntil } from '../../test-kit/test-locks.js';

const faults = useFaultBed('global-table');
const bed = faults.bed;

type Consistency = 'EVENTUAL' | 'STRONG' | undefined;

/** The bed's table as DynamoDB Local describes it, in the fields the check reads (JSON-safe: no dates). */
async function plainDescription(): Promise<Record<string, unknown>> {
  const { Table } = await bed.raw.send(new sdk.DescribeTableCommand({ TableName: bed.tableName }));
  return {
    TableName: Table?.TableName,
    TableStatus: Table?.TableStatus,
    KeySchema: Table?.KeySchema,
    AttributeDefinitions: Table?.AttributeDefinitions,
  };
}

/** Makes the proxy describe the bed's table as a global table with replicas in two Regions. */
async function describeAsGlobal(proxy: FaultProxy, consistency: Consistency): Promise<void> {
  const table = {
    ...(await plainDescription()),
    Replicas: [
      { RegionName: 'us-east-1', ReplicaStatus: 'ACTIVE' },
      { RegionName: 'eu-west-1', ReplicaStatus: 'ACTIVE' },
    ],
    ...(consistency === undefined ? {} : { MultiRegionConsistency: consistency }),
  };
  const reply: RequestFault = { action: 'respond', reply: { status: 200, body: JSON.stringify({ Table: table }) } };
  proxy.setRule((request) => (operationOf(request) === 'DescribeTable' ? reply : { action: 'forward' }));
}

const operations = (proxy: FaultProxy): (string | undefined)[] => proxy.exchanges.map((exchange) => operationOf(exchange.request));

async function globalClient(
  consistency: Consistency,
  settings: { allowEventuallyConsistentGlobalTable?: boolean; fencingTableName?: string } = {},
): Promise<{ client: LockClient; proxy: FaultProxy }> {
  const { proxy, dynamoDB } = await faults.proxied('global', { sdkDefaults: true });
  await describeAsGlobal(proxy, consistency);
  const client = bed.client({ ownerName: 'global', leaseDuration: 2_000, heartbeatPeriod: 500, ...settings }, dynamoDB);
  return { client, proxy };
}

describe('a global table with multi-Region eventual consistency', () => {
  it.each<[string, Consistency]>([
    ['EVENTUAL', 'EVENTUAL'],
    ['absent (EVENTUAL is the default)', undefined],
  ])('MultiRegionConsistency %s: refused with LockTableReplicationError before any lock write, once per client', async (_, consistency) => {
    const { client, proxy } = await globalClient(consistency);

    const error = await rejectionOf(client.acquireLock('job'));
    expect(error).toBeInstanceOf(LockTableReplicationError);
    expect(isLockTableReplicationError(error)).toBe(true);
    expect(error).toMatchObject({ code: 'EVENTUAL_CONSISTENCY', tableName: bed.tableName, replicaRegions: ['us-east-1', 'eu-west-1'] });
    expect((error as Error).message).toContain('multi-Region eventual consistency (replicas in us-east-1, eu-west-1)');
    expect((error as Error).message).toContain('allowEventuallyConsistentGlobalTable: true');

    // The verdict stands for the client: no second DescribeTable, and never a lock write.
    expect(await rejectionOf(client.withLock('other', () => 'ran'))).toBeInstanceOf(LockTableReplicationError);
    expect(operations(proxy)).toEqual(['DescribeTable']);
    expect(await bed.item('job')).toBeUndefined();
  });

  it('allowEventuallyConsistentGlobalTable: the lock works, and no DescribeTable is sent for it', async () => {
    const { client, proxy } = await globalClient('EVENTUAL', { allowEventuallyConsistentGlobalTable: true });

    const lock = await client.acquireLock('job');
    expect(await bed.owner('job')).toBe('global');
    expect(await lock.release()).toBe(true);
    expect(operations(proxy)).not.toContain('DescribeTable');
  });
});

/**
 * SDKs released before multi-Region strong consistency drop the field from
 * DescribeTable's answer: with them such a table reads as eventually
 * consistent and is refused (the first describe block still runs).
 */
const sdkKeepsConsistency = 'MultiRegionConsistency' in sdk;

(sdkKeepsConsistency ? describe : describe.skip)('a global table with multi-Region strong consistency', () => {
  it('carries locks; concurrent first acquisitions share one DescribeTable, later ones send none', async () => {
    const { client, proxy } = await globalClient('STRONG');

    const locks = await Promise.all(['a', 'b', 'c', 'd'].map((key) => client.acquireLock(key)));
    expect(locks.map((lock) => lock.partitionKey)).toEqual(['a', 'b', 'c', 'd']);
    await client.acquireLock('e');
    expect(operations(proxy).filter((operation) => operation === 'DescribeTable')).toHaveLength(1);
    expect(await bed.owner('e')).toBe('global');
  });

  it('refuses guarded writes up front: it has no transactions', async () => {
    const { client, proxy } = await globalClient('STRONG');
    const data = await createDataTable(bed.raw, 'global-data');
    const lock = await client.acquireLock('job');

    const error = await rejectionOf(lock.transactWrite([increment(data, 'x')]));
    expect(error).toMatchObject({ name: 'LockTableReplicationError', code: 'TRANSACTIONS_UNSUPPORTED' });
    expect((error as Error).message).toContain('guarded writes');
    expect(operations(proxy)).not.toContain('TransactWriteItems');
    expect(lock.isHeld()).toBe(true);
  });

  it('refuses a fencing client at its first acquisition, before any write', async () => {
    const { client, proxy } = await globalClient('STRONG', { fencingTableName: `${bed.tableName}-fencing` });

    const error = await rejectionOf(client.acquireLock('job'));
    expect(error).toMatchObject({ name: 'LockTableReplicationError', code: 'TRANSACTIONS_UNSUPPORTED' });
    expect((error as Error).message).toContain('fencingTableName');
    expect(operations(proxy)).toEqual(['DescribeTable']);
  });
});

describe('the check itself', () => {
  it('a single-Region table (DynamoDB Local as it is) passes with one DescribeTable per client', async () => {
    const { proxy, dynamoDB } = await faults.proxied('single', { sdkDefaults: true });
    const client = bed.client({ ownerName: 'single' }, dynamoDB);

    for (const key of ['a', 'b', 'c']) await (await client.acquireLock(key)).release();
    expect(operations(proxy).filter((operation) => operation === 'DescribeTable')).toHaveLength(1);
  });

  it('without dynamodb:DescribeTable: a typed error that names the permission; the next acquisition checks again', async () => {
    const { proxy, dynamoDB } = await faults.proxied('denied', { sdkDefaults: true });
    const denied: RequestFault = { action: 'respond', reply: dynamoDBErrorReply('AccessDeniedException') };
    proxy.setRule((request) => (operationOf(request) === 'DescribeTable' ? denied : { action: 'forward' }));
    const client = bed.client({ ownerName: 'denied' }, dynamoDB);

    const error = await rejectionOf(client.acquireLock('job'));
    expect(error).toMatchObject({ name: 'LockTableReplicationError', code: 'DESCRIBE_TABLE_DENIED' });
    expect((error as Error).message).toContain('dynamodb:DescribeTable');
    expect(((error as Error).cause as Error).name).toBe('AccessDeniedException');
    expect(await bed.item('job')).toBeUndefined();

    // Permissions can be granted while the client runs.
    proxy.passThrough();
    expect((await client.acquireLock('job')).ownerName).toBe('denied');
  });

  it("a throttled DescribeTable is tried again within the call's wait: the lock is taken once it answers, never before", async () => {
    const { proxy, dynamoDB } = await faults.proxied('outage', { sdkDefaults: true });
    const throttled: RequestFault = { action: 'respond', reply: dynamoDBErrorReply('ThrottlingException') };
    proxy.setRule((request) => (operationOf(request) === 'DescribeTable' ? throttled : { action: 'forward' }));
    const client = bed.client({ ownerName: 'outage' }, dynamoDB);

    const acquiring = client.acquireLock('job', { refreshPeriod: 200, additionalTimeToWaitForLock: Infinity });
    await waitUntil(
      "DescribeTable throttled again after the SDK's retries",
      () => operations(proxy).filter((op) => op === 'DescribeTable').length > 3,
    );
    expect(await bed.item('job')).toBeUndefined();

    proxy.passThrough();
    expect((await acquiring).ownerName).toBe('outage');
  });

  it("an unanswered DescribeTable is abandoned after its bound and tried again within the call's wait, not ended with the SDK's AbortError", async () => {
    const { proxy, dynamoDB } = await faults.proxied('silent', { sdkDefaults: true });
    let silenced = false;
    proxy.setRule((request) => {
      if (operationOf(request) !== 'DescribeTable' || silenced) return { action: 'forward' };
      silenced = true;
      return { action: 'blackhole' };
    });
    const client = bed.client({ ownerName: 'silent' }, dynamoDB);

    const lock = await client.acquireLock('job', { additionalTimeToWaitForLock: 20_000 });

    expect(lock.ownerName).toBe('silent');
    expect(operations(proxy).filter((op) => op === 'DescribeTable')).toHaveLength(2);
    await lock.release();
  }, 40_000);
});

describe('a global table of version 2017.11.29 (Legacy)', () => {
  // Known defect: the legacy version of global tables replicates with last-writer-wins (eventual
  // consistency) like MREC, but DescribeTable shows no `Replicas` for it: only DescribeGlobalTable
  // (which the check never calls, and the documented policies do not grant) lists its Regions.
  // Such a lock table passes the check as a single-Region table, and two Regions can each grant
  // one lock. A fix needs a DescribeGlobalTable call (and its permission in docs/iam/), or a
  // refusal of tables that carry the legacy version's marks; not a small change.
  it.failing('is refused with LockTableReplicationError before any lock write', async () => {
    const { proxy, dynamoDB } = await faults.proxied('legacy', { sdkDefaults: true });
    // What DynamoDB answers for a legacy replica: its own description, streams on, no Replicas;
    // the Regions show only in DescribeGlobalTable.
    const table = {
      ...(await plainDescription()),
      StreamSpecification: { StreamEnabled: true, StreamViewType: 'NEW_AND_OLD_IMAGES' },
    };
    const globalTable = {
      GlobalTableName: bed.tableName,
      GlobalTableStatus: 'ACTIVE',
      ReplicationGroup: [{ RegionName: 'us-east-1' }, { RegionName: 'eu-west-1' }],
    };
    const respond = (body: unknown): RequestFault => ({ action: 'respond', reply: { status: 200, body: JSON.stringify(body) } });
    proxy.setRule((request) => {
      const operation = operationOf(request);
      if (operation === 'DescribeTable') return respond({ Table: table });
      if (operation === 'DescribeGlobalTable') return respond({ GlobalTableDescription: globalTable });
      return { action: 'forward' };
    });
    const client = bed.client({ ownerName: 'legacy', leaseDuration: 2_000, heartbeatPeriod: 500 }, dynamoDB);

    const error = await rejectionOf(client.acquireLock('job'));
    expect(error).toBeInstanceOf(LockTableReplicationError);
    expect(await bed.item('job')).toBeUndefined();
  });
});
