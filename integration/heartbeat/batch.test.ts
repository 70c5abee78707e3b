/**
 * Background heartbeats due together go out as one BatchExecuteStatement
 * call, against DynamoDB Local: they keep every lock, leave items that are
 * the heartbeat UpdateItem's to the attribute, lose only the lock whose
 * condition failed, and give way to one UpdateItem per heartbeat when the
 * table refuses batches.
 *
 * One heartbeat in flight at a time (`heartbeatConcurrency: 1`) and locks
 * acquired together, so that heartbeats fall due while another is in flight
 * and batches form without a heavy load.
 */
import type { BatchStatementRequest } from '@aws-sdk/client-dynamodb';
import { expect, it } from '@jest/globals';
import type { Lock, LockClient } from '../../src/index.js';
import { LockLostError } from '../../src/index.js';
import { useLockTestBed } from '../../test-kit/jest/lock-test-bed-hook.js';
import { recordEvents } from '../../test-kit/jest/lock-events.js';
import { putForeignLock } from '../../test-kit/tamper.js';
import {
  LockTestBed,
  recording,
  refuseStatementBatches,
  sleep,
  waitUntil,
  type RecordingDynamoDB,
  type SentCommand,
} from '../../test-kit/test-locks.js';

const LEASE_MS = 3_000;
const HEARTBEAT_MS = 1_000;

const bed = useLockTestBed('hb-batch');

function batchingClient(ownerName: string): { client: LockClient; recorder: RecordingDynamoDB } {
  const recorder = recording(bed.dynamoDBClient(ownerName));
  const client = bed.client({ ownerName, leaseDuration: LEASE_MS, heartbeatPeriod: HEARTBEAT_MS, heartbeatConcurrency: 1 }, recorder.dynamoDB);
  return { client, recorder };
}

const acquireAll = (client: LockClient, keys: readonly string[]): Promise<Lock[]> => Promise.all(keys.map((key) => client.acquireLock(key)));

/** The lock keys a heartbeat call carries: one for an UpdateItem, one per statement for a batch. */
function keysIn(command: SentCommand): string[] {
  if (command.name === 'BatchExecuteStatementCommand') {
    return (command.input['Statements'] as BatchStatementRequest[]).map((statement) => statement.Parameters?.[2]?.S ?? '?');
  }
  const key = (command.input['Key'] as Record<string, { S?: string }> | undefined)?.['key']?.S;
  return key === undefined ? [] : [key];
}

/** Whether a batch call carries heartbeats (UPDATE statements), not new locks (INSERT statements). */
function isHeartbeatBatch(command: SentCommand): boolean {
  return (command.input['Statements'] as BatchStatementRequest[]).every((statement) => statement.Statement?.startsWith('UPDATE ') === true);
}

/** The keys of every heartbeat statement the recorder saw sent in batches. */
function batchedKeys(recorder: RecordingDynamoDB): string[] {
  return recorder.named('BatchExecuteStatementCommand').filter(isHeartbeatBatch).flatMap(keysIn);
}

it("batched heartbeats keep every lock across three leases and leave the heartbeat UpdateItem's item", async () => {
  const { client, recorder } = batchingClient('batcher');
  const events = recordEvents(client);
  const written = new Set<string>(); // RVNs as each confirmed heartbeat left them
  client.on('heartbeat', ({ lock }) => written.add(lock.recordVersionNumber));
  const keys = Array.from({ length: 40 }, (_, i) => `batch-${i}`);
  const locks = await acquireAll(client, keys);
  const firstRvns = locks.map((lock) => lock.recordVersionNumber);

  await sleep(3 * LEASE_MS);

  expect(events.of('lost').map((seen) => seen.event.error.message)).toEqual([]);
  expect(events.of('heartbeatError')).toEqual([]);
  expect(locks.filter((lock) => lock.state !== 'held').map((lock) => lock.partitionKey)).toEqual([]);
  expect(locks.filter((lock, i) => lock.recordVersionNumber === firstRvns[i]).map((lock) => lock.partitionKey)).toEqual([]);
  const batches = recorder.named('BatchExecuteStatementCommand').filter(isHeartbeatBatch);
  expect(batches.some((command) => (command.input['Statements'] as unknown[]).length > 1)).toBe(true);
  expect(new Set(batchedKeys(recorder)).size).toBeGreaterThan(keys.length / 2);

  // In the table each item is what a heartbeat UpdateItem leaves: the lease and a new RVN that this
  // client's heartbeats wrote, nothing else. Heartbeats go on meanwhile: an RVN read from the table may
  // belong to a heartbeat whose reply is still on its way, so membership is checked a moment later.
  const stored: { key: string; rvn: string | undefined }[] = [];
  for (const lock of locks) {
    const item = await bed.item(lock.partitionKey);
    expect(item).toEqual({
      key: { S: lock.partitionKey },
      ownerName: { S: 'batcher' },
      recordVersionNumber: { S: expect.any(String) },
      leaseDuration: { S: String(LEASE_MS) },
    });
    stored.push({ key: lock.partitionKey, rvn: item?.['recordVersionNumber']?.S });
  }
  await sleep(500);
  expect(stored.filter(({ rvn }) => rvn === undefined || !written.has(rvn))).toEqual([]);
  const released = await Promise.all(locks.map((lock) => lock.release()));
  expect(released.filter((ok) => !ok)).toEqual([]);
}, 30_000);

it('a lock taken by another client is lost at its first batched heartbeat; the rest of the batch is kept', async () => {
  const { client, recorder } = batchingClient('batch-victim');
  const events = recordEvents(client);
  const keys = Array.from({ length: 20 }, (_, i) => `taken-${i}`);
  const locks = await acquireAll(client, keys);
  // Whether a lock's first heartbeat goes alone or in a batch is a matter of timing. Holding back the
  // first heartbeat call settles it: if that call is a batch, the stolen lock is one of its locks;
  // if not, the stolen lock is another one, and the call is let go only once every other lock's
  // heartbeat is due behind it, so that they all leave together (fewer than a batch's 25).
  let letGo = (): void => undefined;
  const heldBack = new Promise<void>((resolve) => {
    letGo = resolve;
  });
  const heldCalls: SentCommand[] = [];
  recorder.hold = (command) => {
    if (heldCalls.length > 0) return undefined;
    heldCalls.push(command);
    return heldBack;
  };
  await waitUntil('the first heartbeat is sent', () => heldCalls.length > 0, { timeoutMs: HEARTBEAT_MS + 2_000 });
  const firstKeys = keysIn(heldCalls[0] as SentCommand);
  const firstIsBatch = firstKeys.length > 1;
  const stolen = locks.find((lock) => firstKeys.includes(lock.partitionKey) === firstIsBatch) as Lock;
  // Another owner's item in its place, as after a takeover of an expired lease.
  await putForeignLock(bed, stolen.partitionKey, 'thief', { rvn: 'thief-rvn' });
  if (!firstIsBatch) {
    const lastDueAt = Math.max(...locks.map((lock) => lock.lookupTime)) + HEARTBEAT_MS;
    await sleep(Math.max(0, lastDueAt - performance.now()) + 100);
  }
  letGo();

  await waitUntil('the stolen lock is lost', () => stolen.signal.aborted, { timeoutMs: HEARTBEAT_MS + 2_000 });
  const reason: unknown = stolen.signal.reason;
  expect(reason).toBeInstanceOf(LockLostError);
  expect((reason as LockLostError).kind).toBe('taken');
  expect((reason as LockLostError).holder?.ownerName).toBe('thief');
  expect(batchedKeys(recorder)).toContain(stolen.partitionKey);

  await sleep(2 * HEARTBEAT_MS);
  expect(events.of('lost').map((seen) => seen.event.lock.partitionKey)).toEqual([stolen.partitionKey]);
  expect(locks.filter((lock) => lock !== stolen && lock.state !== 'held').map((lock) => lock.partitionKey)).toEqual([]);
  expect(await bed.owner(stolen.partitionKey)).toBe('thief');
}, 20_000);

it('a table that refuses batches gets one UpdateItem per heartbeat from then on, and no lock is lost', async () => {
  const { client, recorder } = batchingClient('no-partiql');
  refuseStatementBatches(recorder, 'PartiQLUpdate');
  const events = recordEvents(client);
  const locks = await acquireAll(
    client,
    Array.from({ length: 30 }, (_, i) => `refused-${i}`),
  );
  const firstRvns = locks.map((lock) => lock.recordVersionNumber);

  await sleep(2 * LEASE_MS);

  // One refused batch of heartbeats (the locks, taken together, went out in a refused batch of their own first).
  expect(recorder.named('BatchExecuteStatementCommand').filter(isHeartbeatBatch)).toHaveLength(1);
  expect(recorder.named('UpdateItemCommand').length).toBeGreaterThanOrEqual(2 * locks.length);
  expect(events.of('heartbeatError')).toEqual([]);
  expect(events.of('lost')).toEqual([]);
  expect(locks.filter((lock, i) => lock.state !== 'held' || lock.recordVersionNumber === firstRvns[i])).toEqual([]);
}, 20_000);

it('on a table with a sort key, batched heartbeats renew the locks of one partition key each by its own sort key', async () => {
  const sorted = new LockTestBed('hb-batch-sk', { partitionKeyName: 'pk', sortKeyName: 'sk' });
  try {
    await sorted.createTable();
    const recorder = recording(sorted.dynamoDBClient('sorted'));
    const client = sorted.client(
      { ownerName: 'sorted', leaseDuration: LEASE_MS, heartbeatPeriod: HEARTBEAT_MS, heartbeatConcurrency: 1 },
      recorder.dynamoDB,
    );
    const events = recordEvents(client);
    const locks = await Promise.all(Array.from({ length: 20 }, (_, i) => client.acquireLock('jobs', { sortKey: `part-${i}` })));
    const firstRvns = locks.map((lock) => lock.recordVersionNumber);
    // Whether heartbeats fall due together is timing (a quick server answers each before the next is due):
    // the first heartbeat call is held back for a fifth of a period, twice the spread of first heartbeats,
    // so that the others are due behind it.
    let heldBack = false;
    recorder.hold = async (command) => {
      if (heldBack || !['UpdateItemCommand', 'BatchExecuteStatementCommand'].includes(command.name)) return;
      heldBack = true;
      await sleep(HEARTBEAT_MS / 5);
    };

    await sleep(2.5 * HEARTBEAT_MS);

    expect(recorder.named('BatchExecuteStatementCommand').filter(isHeartbeatBatch).length).toBeGreaterThan(0);
    expect(events.of('lost')).toEqual([]);
    expect(events.of('heartbeatError')).toEqual([]);
    expect(locks.filter((lock, i) => lock.state !== 'held' || lock.recordVersionNumber === firstRvns[i]).map((lock) => lock.sortKey)).toEqual(
      [],
    );
    const released = await Promise.all(locks.map((lock) => lock.release()));
    expect(released.filter((ok) => !ok)).toEqual([]);
  } finally {
    await sorted.dispose();
  }
}, 20_000);
