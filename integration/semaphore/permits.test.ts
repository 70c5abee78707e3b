/**
 * Semaphores against DynamoDB Local: permits are ordinary locks on
 * `NAME#permit-1` … `NAME#permit-N`, never more than N held at once, taken
 * one or several all or none, waited for by reads alone, recovered from a
 * stopped holder by its RVN standing still, and refused when clients
 * disagree on N.
 */
import { describe, expect, it } from '@jest/globals';
import {
  LockClientClosedError,
  LockCurrentlyUnavailableError,
  LockNotGrantedError,
  PERMITS_ATTRIBUTE,
  SemaphorePermitsMismatchError,
} from '../../src/index.js';
import { countCalls } from '../../test-kit/call-counter.js';
import { createDataTable, dataItem, increment } from '../../test-kit/data-table.js';
import { useLockTestBed } from '../../test-kit/jest/lock-test-bed-hook.js';
import { putForeignLock } from '../../test-kit/tamper.js';
import { now, rejectionOf, sleep } from '../../test-kit/test-locks.js';

const LEASE_MS = 2_000;
const HEARTBEAT_MS = 400;
const REFRESH_MS = 100;
// The lease of a worker, which holds live permits in this jest worker beside a waiter that must not recover them:
// a loaded CI machine can stall the worker for over a second. LEASE_MS stays for stopped holders and waiters.
const HOLDER_LEASE_MS = 4_000;

const bed = useLockTestBed('semaphore');

const worker = (ownerName: string) => bed.client({ ownerName, leaseDuration: HOLDER_LEASE_MS, heartbeatPeriod: HEARTBEAT_MS });

/** The owners of the permits of `name` as stored, permit by permit (`undefined`: no item). */
async function permitOwners(name: string, permits: number): Promise<(string | undefined)[]> {
  return Promise.all(Array.from({ length: permits }, (_, i) => bed.owner(`${name}#permit-${i + 1}`)));
}

describe('a semaphore of ordinary locks', () => {
  it('grants at most N permits at once, each an ordinary lock carrying N, and grants a released one again', async () => {
    const clients = Array.from({ length: 5 }, (_, i) => worker(`worker-${i}`));
    const outcomes = await Promise.allSettled(
      clients.map((client) => client.acquirePermit('exports', { permits: 3, shouldSkipBlockingWait: true, refreshPeriod: REFRESH_MS })),
    );
    const held = outcomes.filter((outcome) => outcome.status === 'fulfilled').map((outcome) => outcome.value);
    const refused = outcomes.filter((outcome) => outcome.status === 'rejected').map((outcome) => outcome.reason as unknown);
    expect(held).toHaveLength(3);
    expect(refused.every((reason) => reason instanceof LockCurrentlyUnavailableError)).toBe(true);
    expect(new Set(held.map((lock) => lock.partitionKey))).toEqual(new Set(['exports#permit-1', 'exports#permit-2', 'exports#permit-3']));
    const item = await bed.item(held[0]!.partitionKey);
    expect(item?.[PERMITS_ATTRIBUTE]).toEqual({ N: '3' });

    const waiter = clients.find((client) => !held.some((lock) => lock.ownerName === client.ownerName))!;
    const waiting = waiter.acquirePermit('exports', { permits: 3, refreshPeriod: REFRESH_MS, additionalTimeToWaitForLock: 5_000 });
    await sleep(3 * REFRESH_MS);
    await held[1]!.release();
    const granted = await waiting;
    expect(granted.partitionKey).toBe(held[1]!.partitionKey);
    expect(granted.ownerName).toBe(waiter.ownerName);
  });

  it('waits on a full semaphore by reads alone, after its one first write', async () => {
    const holders = [worker('holder-a'), worker('holder-b')];
    for (const holder of holders) await holder.acquirePermit('jobs', { permits: 2 });
    const dynamoDB = bed.dynamoDBClient('waiter');
    const calls = countCalls(dynamoDB);
    const waiter = bed.client({ ownerName: 'waiter', leaseDuration: LEASE_MS, heartbeatPeriod: HEARTBEAT_MS }, dynamoDB);
    await waiter.assertLockTableExists();
    calls.reset();

    const started = now();
    const refusal = await rejectionOf(waiter.acquirePermit('jobs', { permits: 2, refreshPeriod: REFRESH_MS, additionalTimeToWaitForLock: 0 }));
    expect(refusal).toBeInstanceOf(LockNotGrantedError);
    expect(now() - started).toBeGreaterThanOrEqual(HOLDER_LEASE_MS);
    // The first try's write, then rounds of one BatchGetItem each (both permits and the one past the last) for a lease.
    const { BatchGetItem: rounds = 0, ...others } = calls.counts();
    const writes = Object.entries(others).filter(([operation]) => operation !== 'DescribeTable');
    expect(writes).toEqual([['PutItem', 1]]);
    expect(rounds).toBeGreaterThanOrEqual(5);

    await holders[0]!.close();
    calls.reset();
    const permit = await waiter.acquirePermit('jobs', { permits: 2, refreshPeriod: REFRESH_MS });
    expect(permit.isHeld()).toBe(true);
  });

  it('after losing a free permit to another client, takes another one its round saw free, without reading again', async () => {
    const racer = worker('racer');
    const dynamoDB = bed.dynamoDBClient('raced');
    const raced = bed.client({ ownerName: 'raced', leaseDuration: LEASE_MS, heartbeatPeriod: HEARTBEAT_MS }, dynamoDB);
    await raced.assertLockTableExists();
    // The racer takes whichever permit the raced client is about to write, twice: its first try and its first take after a round.
    let steals = 2;
    dynamoDB.middlewareStack.add(
      (next, context) => async (args) => {
        const input = args.input as { Key?: { key?: { S?: string } }; Item?: { key?: { S?: string } } };
        const key = (input.Key ?? input.Item)?.key?.S;
        if (steals > 0 && key !== undefined && ['PutItemCommand', 'UpdateItemCommand'].includes(context.commandName ?? '')) {
          steals--;
          await racer.acquireLock(key, { shouldSkipBlockingWait: true });
        }
        return next(args);
      },
      { step: 'initialize', name: 'racer' },
    );
    const calls = countCalls(dynamoDB);
    const permit = await raced.acquirePermit('raced', { permits: 4, refreshPeriod: REFRESH_MS });
    expect(permit.ownerName).toBe('raced');
    expect(steals).toBe(0);
    // One round of reads (the four permits and the one past the last, in one call), then writes until a free permit is taken.
    const { BatchGetItem: rounds, GetItem: reads } = calls.counts();
    expect([rounds, reads]).toEqual([1, undefined]);
  });

  it('reads each permit with GetItem once IAM refused BatchGetItem, and asks for it no more', async () => {
    const holders = [worker('holder-c'), worker('holder-d')];
    for (const holder of holders) await holder.acquirePermit('denied', { permits: 2 });
    const dynamoDB = bed.dynamoDBClient('denied');
    let denied = 0;
    dynamoDB.middlewareStack.add(
      (next, context) => async (args) => {
        if (context.commandName !== 'BatchGetItemCommand') return next(args);
        denied++;
        throw Object.assign(new Error('not authorized to perform: dynamodb:BatchGetItem'), { name: 'AccessDeniedException', $metadata: {} });
      },
      { step: 'initialize', name: 'denyBatchGetItem' },
    );
    const waiter = bed.client({ ownerName: 'denied', leaseDuration: LEASE_MS, heartbeatPeriod: HEARTBEAT_MS }, dynamoDB);
    await waiter.assertLockTableExists();
    const calls = countCalls(dynamoDB);
    const waiting = waiter.acquirePermit('denied', { permits: 2, refreshPeriod: REFRESH_MS, additionalTimeToWaitForLock: 5_000 });
    await sleep(3 * REFRESH_MS);
    await holders[0]!.close();
    expect((await waiting).ownerName).toBe('denied');
    await expect(waiter.acquirePermit('denied', { permits: 2, shouldSkipBlockingWait: true })).rejects.toThrow(LockCurrentlyUnavailableError);
    const { BatchGetItem: batches, GetItem: reads = 0 } = calls.counts();
    expect([denied, batches]).toEqual([1, undefined]);
    expect(reads % 3).toBe(0);
    expect(reads).toBeGreaterThanOrEqual(3 * 2);
  });

  it('takes a permit of a semaphore that is not full with one conditional write, and holds it as any lock', async () => {
    const dynamoDB = bed.dynamoDBClient('fenced');
    const fenced = bed.client({ ownerName: 'fenced', fencingTableName: `${bed.tableName}-fence` }, dynamoDB);
    await fenced.createFencingTable();
    await fenced.assertLockTableExists();
    const data = await createDataTable(bed.raw, 'semaphore-data');
    const calls = countCalls(dynamoDB);
    {
      await using permit = await fenced.acquirePermit('writers', { permits: 4 });
      // One write: the permit's and its counter's step in one transaction (besides the client's first look at its tables).
      expect(calls.calls.filter((operation) => !['DescribeTable', 'GetItem'].includes(operation))).toEqual(['TransactWriteItems']);
      expect(permit.fencingToken).toBe(1n);
      await permit.transactWrite([increment(data, 'row')]);
      expect(await dataItem(bed.raw, data, 'row')).toMatchObject({ n: { N: '1' } });
      expect(await bed.owner(permit.partitionKey)).toBe('fenced');
      calls.reset();
    }
    expect(calls.counts()).toEqual({ DeleteItem: 1 }); // released at the end of the scope
    expect((await permitOwners('writers', 4)).filter((owner) => owner !== undefined)).toEqual([]);

    const unfencedDynamoDB = bed.dynamoDBClient('unfenced');
    const unfenced = bed.client({ ownerName: 'unfenced' }, unfencedDynamoDB);
    await unfenced.assertLockTableExists();
    const unfencedCalls = countCalls(unfencedDynamoDB);
    await unfenced.acquirePermit('readers', { permits: 4 });
    const { DescribeTable: _tableCheckedOnce, ...lockCalls } = unfencedCalls.counts();
    expect(lockCalls).toEqual({ PutItem: 1 });
  });

  it('never lets more than N sections run at once while workers take one or two permits over and over', async () => {
    const permits = 3;
    const sections: { start: number; end: number; taken: number }[] = [];
    const work = async (ownerName: string, count: number): Promise<void> => {
      const client = bed.client({ ownerName }); // the default lease: no recovery is needed here, and a loaded machine is slow
      for (let round = 0; round < 4; round++) {
        const group = await client.acquirePermits('busy', { permits, count, refreshPeriod: 50, additionalTimeToWaitForLock: Infinity });
        const start = now();
        await sleep(30);
        sections.push({ start, end: now(), taken: count });
        await group.release();
      }
    };
    await Promise.all([1, 1, 1, 2, 2, 1].map((count, i) => work(`worker-${i}`, count)));
    expect(sections).toHaveLength(24);
    const edges = sections.flatMap(({ start, end, taken }) => [
      { at: start, step: taken },
      { at: end, step: -taken },
    ]);
    edges.sort((a, b) => a.at - b.at || a.step - b.step);
    let held = 0;
    let most = 0;
    for (const { step } of edges) most = Math.max(most, (held += step));
    expect(most).toBeLessThanOrEqual(permits);
    expect(most).toBeGreaterThan(1);
  }, 60_000);

  it('takes count permits all or none, never holding some while it waits for the others', async () => {
    const holder = worker('holder');
    const taker = worker('taker');
    const first = await holder.acquirePermits('pool', { permits: 3, count: 2 });
    expect(first.locks).toHaveLength(2);
    const refusal = await rejectionOf(taker.acquirePermits('pool', { permits: 3, count: 2, shouldSkipBlockingWait: true }));
    expect(refusal).toBeInstanceOf(LockCurrentlyUnavailableError);
    expect((await permitOwners('pool', 3)).filter((owner) => owner === 'taker')).toEqual([]);

    const waiting = taker.acquirePermits('pool', { permits: 3, count: 2, refreshPeriod: REFRESH_MS, additionalTimeToWaitForLock: 10_000 });
    let settled = false;
    void waiting.finally(() => (settled = true));
    for (let round = 0; round < 5; round++) {
      await sleep(REFRESH_MS);
      expect((await permitOwners('pool', 3)).filter((owner) => owner === 'taker')).toEqual([]);
    }
    expect(settled).toBe(false);
    await first.locks[0]!.release();
    const group = await waiting;
    expect(group.locks).toHaveLength(2);
    expect((await permitOwners('pool', 3)).sort()).toEqual(['holder', 'taker', 'taker']);
    await group.release();
  });

  it('recovers the permit of a holder that stopped once its RVN stood still for its lease', async () => {
    for (const i of [1, 2]) await putForeignLock(bed, `crashed#permit-${i}`, `dead-${i}`, { leaseMs: LEASE_MS });
    const waiter = worker('waiter');
    const started = now();
    const permit = await waiter.acquirePermit('crashed', { permits: 2, refreshPeriod: REFRESH_MS, additionalTimeToWaitForLock: 5_000 });
    expect(now() - started).toBeGreaterThan(LEASE_MS);
    expect(permit.ownerName).toBe('waiter');
    expect(await bed.owner(permit.partitionKey)).toBe('waiter');
  });

  it('never recovers a permit whose holder heartbeats', async () => {
    const holder = worker('live');
    await holder.acquirePermit('alive', { permits: 1 });
    const waiter = worker('waiter');
    const refusal = await rejectionOf(
      waiter.acquirePermit('alive', { permits: 1, refreshPeriod: REFRESH_MS, additionalTimeToWaitForLock: 1_000 }),
    );
    expect(refusal).toBeInstanceOf(LockNotGrantedError);
    expect(await bed.owner('alive#permit-1')).toBe('live');
  });

  it('refuses when clients disagree on N: a permit held by a client of another N, or one past the last', async () => {
    const three = worker('three');
    await three.acquirePermits('mixed', { permits: 3, count: 3 });
    const two = worker('two');
    const fewer = await rejectionOf(two.acquirePermit('mixed', { permits: 2, refreshPeriod: REFRESH_MS }));
    expect(fewer).toBeInstanceOf(SemaphorePermitsMismatchError);
    expect(fewer).toMatchObject({ permits: 2 });
    const four = worker('four');
    await putForeignLock(bed, 'mixed#permit-4', 'java-host');
    const more = await rejectionOf(four.acquirePermits('mixed', { permits: 4, count: 2, refreshPeriod: REFRESH_MS }));
    expect(more).toBeInstanceOf(SemaphorePermitsMismatchError);
    expect(more).toMatchObject({ permits: 4, permitsOnItem: 3 });
    expect((await permitOwners('mixed', 4)).sort()).toEqual(['java-host', 'three', 'three', 'three']);
  });

  it('ends a wait when its signal aborts, or its client closes, holding nothing', async () => {
    await worker('holder').acquirePermit('full', { permits: 1 });
    const waiter = worker('waiter');
    const wait = { permits: 1, refreshPeriod: REFRESH_MS, additionalTimeToWaitForLock: Infinity };
    const reason = new Error('caller gave up');
    const aborted = rejectionOf(waiter.acquirePermits('full', { ...wait, count: 1, signal: AbortSignal.timeout(3 * REFRESH_MS) }));
    const controller = new AbortController();
    const cancelled = rejectionOf(waiter.acquirePermit('full', { ...wait, signal: controller.signal }));
    await sleep(3 * REFRESH_MS);
    controller.abort(reason);
    expect(await cancelled).toBe(reason);
    expect((await aborted) as Error).toMatchObject({ name: 'TimeoutError' });

    const closing = rejectionOf(waiter.acquirePermit('full', wait));
    await sleep(3 * REFRESH_MS);
    await waiter.close();
    expect(await closing).toBeInstanceOf(LockClientClosedError);
    expect(await bed.owner('full#permit-1')).toBe('holder');
  });

  it('lists a permit as the lock it is', async () => {
    const holder = worker('holder');
    const permit = await holder.acquirePermit('listed', { permits: 2 });
    const listed: string[] = [];
    for await (const lock of worker('reader').getAllLocks()) listed.push(lock.partitionKey);
    expect(listed).toContain(permit.partitionKey);
  });
});
