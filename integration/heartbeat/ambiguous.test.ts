/**
 * Heartbeats whose outcome the holder cannot know: the write reached
 * DynamoDB and was applied, but the reply was lost. The table then holds an
 * RVN the holder never saw confirmed; its next write must accept it, or the
 * holder would lose a lock nobody else has. The same for a batch of
 * heartbeats: every lock in it.
 */
import { describe, expect, it } from '@jest/globals';
import type { Lock, LockClient } from '../../src/index.js';
import { useFaultBed } from '../../test-kit/jest/fault-bed.js';
import { operationOf, type ProxiedRequest } from '../../test-kit/fault-proxy.js';
import { recordEvents, within, type EventLog } from '../../test-kit/jest/lock-events.js';
import type { ProxiedDynamoDB } from '../../test-kit/proxied-dynamodb.js';
import { sleep, waitUntil } from '../../test-kit/test-locks.js';

const LEASE_MS = 2_000;
const HEARTBEAT_MS = 400;

const faults = useFaultBed('hb-ambiguous');

const isUpdateItem = (request: ProxiedRequest): boolean => operationOf(request) === 'UpdateItem';
/** How the lock client sees a connection the proxy destroyed (a timeout on a busy machine would read otherwise). */
const isDroppedConnection = (error: unknown): boolean => /socket hang up/.test(String(error));
const isDeleteItem = (request: ProxiedRequest): boolean => operationOf(request) === 'DeleteItem';

interface SentWrite {
  ExpressionAttributeValues?: Record<string, { S?: string }>;
}

/** The string values a write request conditioned on or wrote (RVNs among them). */
function stringValuesOf(request: ProxiedRequest): string[] {
  const input = JSON.parse(request.body.toString('utf8')) as SentWrite;
  return Object.values(input.ExpressionAttributeValues ?? {}).flatMap((value) => (value.S === undefined ? [] : [value.S]));
}

/** The RVN a heartbeat request writes. */
function newRvnOf(request: ProxiedRequest): string {
  const input = JSON.parse(request.body.toString('utf8')) as SentWrite;
  const rvn = input.ExpressionAttributeValues?.[':newRvn']?.S;
  if (rvn === undefined) throw new Error(`not a heartbeat: ${request.body.toString('utf8')}`);
  return rvn;
}

async function holdThroughProxy(key: string): Promise<{ client: LockClient; lock: Lock; network: ProxiedDynamoDB; events: EventLog }> {
  const network = await faults.proxied(key);
  const client = faults.bed.client({ ownerName: key, leaseDuration: LEASE_MS, heartbeatPeriod: HEARTBEAT_MS }, network.dynamoDB);
  const events = recordEvents(client);
  const lock = await client.acquireLock(key);
  return { client, lock, network, events };
}

describe('a heartbeat applied by DynamoDB whose reply was lost', () => {
  it('does not cost the lock: the next heartbeat succeeds and the table keeps the RVN the lock knows', async () => {
    const { lock, network, events } = await holdThroughProxy('reply-lost');
    const dropped = await within(network.proxy.dropNextReply(isUpdateItem), 5_000, 'a heartbeat whose reply is dropped');
    const appliedRvn = newRvnOf(dropped.request);

    // The fault really happened: DynamoDB answered 200, and the holder only saw its connection die.
    expect(dropped.swallowedStatusLine).toMatch(/^HTTP\/1\.1 200 /);
    // The holder saw it fail. (Not checked: `willRetry`. Under jest the SDK receives Node's socket errors
    // from another realm and strips their `code`, so they do not look transient; outside jest they do.)
    await waitUntil('a heartbeat is confirmed after the failed one', () => {
      const failedAt = events.of('heartbeatError', lock).find((seen) => isDroppedConnection(seen.event.error))?.at;
      return failedAt !== undefined && events.of('heartbeat', lock).some((seen) => seen.at > failedAt);
    });

    // The write after the lost reply accepted the RVN that reply would have confirmed.
    const after = network.proxy.exchanges.filter((e) => isUpdateItem(e.request) && e.request.seq > dropped.request.seq);
    expect(stringValuesOf(after[0]!.request)).toContain(appliedRvn);

    await sleep(LEASE_MS); // a whole lease more: still held, heartbeats still confirmed
    expect(events.of('lost')).toEqual([]);
    expect(lock.state).toBe('held');
    expect(lock.signal.aborted).toBe(false);
    expect(lock.recordVersionNumber).not.toBe(appliedRvn);
    // A heartbeat may be in flight at any moment; between two of them the table and the lock agree.
    await waitUntil(
      'the table RVN equals lock.recordVersionNumber',
      async () => (await faults.bed.rvn('reply-lost')) === lock.recordVersionNumber,
    );
    expect(await faults.bed.owner('reply-lost')).toBe('reply-lost');
  }, 20_000);

  it('does not stop a release right after it: release returns true and the item is gone', async () => {
    const { client, lock, network, events } = await holdThroughProxy('release-after-lost-reply');
    let releasing: Promise<boolean> | undefined;
    // Release at the first failure, before the heartbeat is retried: the table then holds the unconfirmed RVN.
    client.on('heartbeatError', (event) => {
      if (event.lock === lock && isDroppedConnection(event.error)) releasing ??= lock.release();
    });
    const dropped = await within(network.proxy.dropNextReply(isUpdateItem), 5_000, 'a heartbeat whose reply is dropped');

    expect(dropped.swallowedStatusLine).toMatch(/^HTTP\/1\.1 200 /);
    await waitUntil('the failed heartbeat is reported', () => releasing !== undefined);
    expect(await releasing).toBe(true);
    expect(await faults.bed.item('release-after-lost-reply')).toBeUndefined();
    expect(lock.state).toBe('released');
    expect(events.of('lost')).toEqual([]);
    // No heartbeat was confirmed in between: the release alone had to accept the unconfirmed RVN.
    const writes = network.proxy.exchanges.filter(
      (e) => e.request.seq > dropped.request.seq && (isUpdateItem(e.request) || isDeleteItem(e.request)),
    );
    expect(writes.map((e) => operationOf(e.request))).toEqual(['DeleteItem']);
    expect(stringValuesOf(writes[0]!.request)).toContain(newRvnOf(dropped.request));
  }, 20_000);
});

describe('a heartbeat that never gets an answer (a dead connection)', () => {
  it('does not cost the lock when the SDK has no request timeout (its default): a retry on a new connection renews it', async () => {
    const network = await faults.proxied('hung', { requestTimeout: 0 });
    const client = faults.bed.client({ ownerName: 'hung', leaseDuration: LEASE_MS, heartbeatPeriod: HEARTBEAT_MS }, network.dynamoDB);
    const events = recordEvents(client);
    const lock = await client.acquireLock('hung');

    // Only this one heartbeat vanishes; every later request is answered at once.
    const hung = await within(network.proxy.injectOnce(isUpdateItem, { action: 'blackhole' }), 5_000, 'a heartbeat is blackholed');
    await sleep(LEASE_MS + HEARTBEAT_MS);

    expect(events.of('lost').map((seen) => seen.event.error.message)).toEqual([]);
    expect(lock.state).toBe('held');
    const laterHeartbeats = network.proxy.exchanges.filter((e) => isUpdateItem(e.request) && e.request.seq > hung.request.seq);
    expect(laterHeartbeats.length).toBeGreaterThan(0);
  }, 20_000);
});

describe('a release while a heartbeat hangs', () => {
  it('does not wait for the heartbeat: it is confirmed while the heartbeat is still unanswered, accepting its RVN', async () => {
    // A long period and no SDK request timeout: only the hung heartbeat's own deadline (seconds away) would end it.
    const network = await faults.proxied('release-past-hung', { requestTimeout: 0 });
    const client = faults.bed.client({ ownerName: 'release-past-hung', leaseDuration: 10_000, heartbeatPeriod: 2_500 }, network.dynamoDB);
    const events = recordEvents(client);
    const lock = await client.acquireLock('release-past-hung');

    const hung = await within(network.proxy.injectOnce(isUpdateItem, { action: 'blackhole' }), 10_000, 'a heartbeat is blackholed');
    // Queued behind the heartbeat, the release would wait for that heartbeat's deadline.
    expect(await within(lock.release(), 4_000, "the release, before the hung heartbeat's deadline")).toBe(true);

    // Nothing is reported about a heartbeat cut short by the lock's own release.
    expect(events.of('heartbeatError')).toEqual([]);
    expect(await faults.bed.item('release-past-hung')).toBeUndefined();
    expect(lock.state).toBe('released');
    expect(events.of('lost')).toEqual([]);
    const release = network.proxy.exchanges.find((e) => isDeleteItem(e.request) && e.request.seq > hung.request.seq);
    expect(stringValuesOf(release!.request)).toContain(newRvnOf(hung.request));
  }, 20_000);
});

describe('many heartbeats with unknown outcome in a row (a long outage within a long lease)', () => {
  it('can still be renewed once DynamoDB answers again', async () => {
    const network = await faults.proxied('outage');
    const client = faults.bed.client(
      { ownerName: 'outage', leaseDuration: 60_000, heartbeatPeriod: 1_000, backgroundHeartbeats: false },
      network.dynamoDB,
    );
    const lock = await client.acquireLock('outage');

    network.proxy.refuseConnections();
    network.proxy.resetOpenConnections();
    for (let attempt = 0; attempt < 160; attempt++) {
      await expect(lock.sendHeartbeat()).rejects.toThrow();
    }
    network.proxy.refuseConnections(false);

    await lock.sendHeartbeat();
    expect(await faults.bed.rvn('outage')).toBe(lock.recordVersionNumber);
  }, 20_000);
});

describe('a batch of heartbeats applied by DynamoDB whose reply was lost', () => {
  const isBatch = (request: ProxiedRequest): boolean => operationOf(request) === 'BatchExecuteStatement';
  interface SentBatch {
    Statements: { Parameters: { S?: string }[] }[];
  }
  /** Per statement of a batch request: the lock's partition key and the RVN it writes (parameters 3 and 2). */
  const writesOf = (request: ProxiedRequest): { key: string; newRvn: string }[] =>
    (JSON.parse(request.body.toString('utf8')) as SentBatch).Statements.map((statement) => ({
      key: statement.Parameters[2]?.S ?? '?',
      newRvn: statement.Parameters[1]?.S ?? '?',
    }));
  /** Every string a later write of the lock offered: single heartbeats' values and batched statements' parameters. */
  const offeredLater = (network: ProxiedDynamoDB, after: number, key: string): string[] =>
    network.proxy.exchanges
      .filter((e) => e.request.seq > after)
      .flatMap((e) => {
        if (isUpdateItem(e.request)) {
          const { Key } = JSON.parse(e.request.body.toString('utf8')) as { Key?: { key?: { S?: string } } };
          return Key?.key?.S === key ? stringValuesOf(e.request) : [];
        }
        if (!isBatch(e.request)) return [];
        const statements = (JSON.parse(e.request.body.toString('utf8')) as SentBatch).Statements;
        return statements
          .filter((statement) => statement.Parameters[2]?.S === key)
          .flatMap((statement) => statement.Parameters.map((p) => p.S ?? ''));
      });

  it("costs none of its locks: each lock's next write accepts the RVN the lost reply would have confirmed", async () => {
    const network = await faults.proxied('batch-reply-lost');
    // One request in flight at a time, so that heartbeats due meanwhile form batches.
    const client = faults.bed.client(
      { ownerName: 'batch-reply-lost', leaseDuration: LEASE_MS, heartbeatPeriod: HEARTBEAT_MS, heartbeatConcurrency: 1 },
      network.dynamoDB,
    );
    const events = recordEvents(client);
    const locks = await Promise.all(Array.from({ length: 20 }, (_, i) => client.acquireLock(`batch-lost-${i}`)));
    const dropped = await within(network.proxy.dropNextReply(isBatch), 5_000, 'a batch whose reply is dropped');
    expect(dropped.swallowedStatusLine).toMatch(/^HTTP\/1\.1 200 /);
    const lostWrites = writesOf(dropped.request);
    expect(lostWrites.length).toBeGreaterThan(1);

    await sleep(LEASE_MS); // a whole lease: every lock of the dropped batch heartbeated again since
    expect(events.of('lost')).toEqual([]);
    expect(locks.filter((lock) => lock.state !== 'held').map((lock) => lock.partitionKey)).toEqual([]);
    for (const { key, newRvn } of lostWrites) {
      expect(offeredLater(network, dropped.request.seq, key)).toContain(newRvn);
    }
    const released = await Promise.all(locks.map((lock) => lock.release()));
    expect(released.filter((ok) => !ok)).toEqual([]);
  }, 20_000);
});
