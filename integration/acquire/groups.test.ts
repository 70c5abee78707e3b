/**
 * `acquireLocks` against DynamoDB Local: every lock of a group or none, in
 * one TransactWriteItems per attempt. It never holds one lock while it waits
 * for another, takes over a stale holder the Java way, resolves a
 * transaction whose reply was lost from the items it left, and releases
 * what a caller gave up on while the winning transaction was in flight.
 * Bad input to it: integration/bad-input.test.ts.
 */
import { PutItemCommand } from '@aws-sdk/client-dynamodb';
import { describe, expect, it } from '@jest/globals';
import { isLockLostError, type Lock, type LockClient } from '../../src/index.js';
import { operationOf, type ProxiedRequest } from '../../test-kit/fault-proxy.js';
import { useFaultBed } from '../../test-kit/jest/fault-bed.js';
import { within } from '../../test-kit/jest/lock-events.js';
import { now, recording, rejectionOf, sleep, waitUntil, watch } from '../../test-kit/test-locks.js';

const faults = useFaultBed('groups');
const bed = faults.bed;

const isTransaction = (request: ProxiedRequest): boolean => operationOf(request) === 'TransactWriteItems';
const KEYS = ['from-account', 'to-account', 'ledger'];
/** Another client's item on the third key, with a lease long enough to outlast any test. */
const THIEF = { key: { S: 'ledger' }, ownerName: { S: 'thief' }, leaseDuration: { S: '60000' }, recordVersionNumber: { S: 'stolen' } };

function client(ownerName: string, dynamoDB?: Parameters<typeof bed.client>[1]): LockClient {
  return bed.client({ ownerName, leaseDuration: 2_000, heartbeatPeriod: 500 }, dynamoDB);
}

/** The RVN each key holds in the table, and whose it is. */
async function stored(keys: readonly string[]): Promise<{ owner: string | undefined; rvn: string | undefined }[]> {
  return Promise.all(keys.map(async (key) => ({ owner: await bed.owner(key), rvn: await bed.rvn(key) })));
}

/**
 * Until the table holds each of `locks` as `owner`'s, with the RVN the lock has: its heartbeats go on, and one applied
 * but not yet answered puts the table a step ahead of its lock.
 */
async function untilStored(owner: string, locks: readonly Lock[]): Promise<void> {
  const holds = async (): Promise<boolean> =>
    (await stored(locks.map((lock) => lock.partitionKey))).every((row, i) => row.owner === owner && row.rvn === locks[i]?.recordVersionNumber);
  await waitUntil(`the table holds the locks of ${owner}`, holds);
}

describe('acquireLocks', () => {
  it('takes free locks in one transaction, each then an ordinary held lock', async () => {
    const recorder = recording(bed.dynamoDBClient('group'));
    const group = await client('group', recorder.dynamoDB).acquireLocks(KEYS);

    expect(recorder.named('TransactWriteItemsCommand')).toHaveLength(1);
    expect(recorder.named('PutItemCommand')).toHaveLength(0);
    expect(group.locks.map((lock) => lock.partitionKey)).toEqual(KEYS);
    await untilStored('group', group.locks);
    // Heartbeats keep each lock on its own.
    const first = group.locks.map((lock) => lock.recordVersionNumber);
    await waitUntil('every lock heartbeated', () => group.locks.every((lock, i) => lock.recordVersionNumber !== first[i]));
    expect(await group.release()).toBe(true);
    expect(await stored(KEYS)).toEqual(KEYS.map(() => ({ owner: undefined, rvn: undefined })));
  });

  it('waits while another client holds one, holding none meanwhile, and takes all once it is released', async () => {
    // Heartbeats a period of 5 s apart: none lands while the rounds below read the holder's RVN from the table.
    const holder = await bed.client({ ownerName: 'holder', leaseDuration: 20_000, heartbeatPeriod: 5_000 }).acquireLock('to-account');
    const acquiring = watch(client('group').acquireLocks(KEYS, { refreshPeriod: 100, additionalTimeToWaitForLock: 20_000 }));

    for (let round = 0; round < 5; round++) {
      await sleep(150);
      expect(acquiring.settled()).toBe(false);
      expect(await stored(KEYS)).toEqual([
        { owner: undefined, rvn: undefined },
        { owner: 'holder', rvn: holder.recordVersionNumber },
        { owner: undefined, rvn: undefined },
      ]);
    }
    await holder.release();
    const group = await acquiring.promise;
    await untilStored('group', group.locks);
  });

  it('takes over a lock whose RVN stayed unchanged for its lease on this clock', async () => {
    // A holder that died: a Java-shaped item nobody heartbeats.
    await bed.raw.send(
      new PutItemCommand({
        TableName: bed.tableName,
        Item: { key: { S: 'ledger' }, ownerName: { S: 'dead' }, leaseDuration: { S: '1500' }, recordVersionNumber: { S: 'dead-rvn' } },
      }),
    );
    const startedAt = now();
    const group = await client('group').acquireLocks(KEYS, { refreshPeriod: 200, additionalTimeToWaitForLock: 0 });

    // Never before the dead holder's lease had run out since this client first saw its RVN.
    expect(now() - startedAt).toBeGreaterThan(1_500);
    await untilStored('group', group.locks);
  });

  it('ends with LockNotGrantedError naming the holder, holding none, when a lock stays held past the deadline', async () => {
    // Held through the group's wait (its lease and 300 ms) while the group waits in this worker too: a stalled worker does
    // not cost it the lock.
    const holder = await bed.client({ ownerName: 'holder', leaseDuration: 3_000, heartbeatPeriod: 500 }).acquireLock('from-account');
    const error = await rejectionOf(client('group').acquireLocks(KEYS, { refreshPeriod: 100, additionalTimeToWaitForLock: 300 }));
    expect(error).toMatchObject({ name: 'LockNotGrantedError', partitionKey: 'from-account', holder: { ownerName: 'holder' } });
    expect(await stored(KEYS.slice(1))).toEqual([
      { owner: undefined, rvn: undefined },
      { owner: undefined, rvn: undefined },
    ]);
    await holder.release();
  });

  it.each([
    ['with the SDK retrying it under its ClientRequestToken', true],
    ['read back when the SDK does not retry', false],
  ])('a transaction whose reply was lost is ours, %s, without a second holder', async (_title, sdkDefaults) => {
    const network = await faults.proxied('lost-reply', { sdkDefaults, requestTimeout: 2_000 });
    const lost = network.proxy.dropNextReply(isTransaction);
    const group = await client('lost-reply', network.dynamoDB).acquireLocks(KEYS, { refreshPeriod: 100 });

    expect((await within(lost, 1_000, 'the lost transaction reply')).swallowedStatusLine).toMatch(/^HTTP\/1\.1 200 /);
    const transactions = network.proxy.exchanges.filter((exchange) => isTransaction(exchange.request));
    // Retried with the same token, or not sent again at all: the read showed it applied.
    expect(new Set(transactions.map((exchange) => exchange.request.headers['amz-sdk-invocation-id'])).size).toBe(1);
    await untilStored('lost-reply', group.locks);
    expect(group.isHeld()).toBe(true);
    expect(await group.release()).toBe(true);
  });

  it('a lost transaction found applied after someone took one of its locks over: the rest is released, nothing left half held', async () => {
    const network = await faults.proxied('overtaken');
    const recorder = recording(network.dynamoDB);
    let stolen: Promise<unknown> | undefined;
    recorder.hold = async (command) => {
      // Before the reads that follow the lost reply, another client takes one lock over.
      if (command.name === 'GetItemCommand' && recorder.named('TransactWriteItemsCommand').length > 0) {
        stolen ??= bed.raw.send(new PutItemCommand({ TableName: bed.tableName, Item: THIEF }));
        await stolen;
      }
    };
    const lost = network.proxy.dropNextReply(isTransaction);
    const caller = new AbortController();
    const acquiring = watch(client('overtaken', recorder.dynamoDB).acquireLocks(KEYS, { refreshPeriod: 100, signal: caller.signal }));

    await within(lost, 2_000, 'the lost transaction reply');
    await waitUntil(
      'the locks still ours released',
      async () => (await bed.rvn('from-account')) === undefined && (await bed.rvn('to-account')) === undefined,
    );
    expect(acquiring.settled()).toBe(false); // waiting for the thief's lock, holding nothing
    expect(await stored(KEYS)).toEqual([
      { owner: undefined, rvn: undefined },
      { owner: undefined, rvn: undefined },
      { owner: 'thief', rvn: 'stolen' },
    ]);
    caller.abort(new Error('enough'));
    expect(await rejectionOf(acquiring.promise)).toMatchObject({ message: 'enough' });
    expect(recorder.named('TransactWriteItemsCommand')).toHaveLength(1);
  });

  it('releases every lock when the caller gives up while the winning transaction is in flight', async () => {
    const dynamoDB = bed.dynamoDBClient('quitter');
    const caller = new AbortController();
    dynamoDB.middlewareStack.add(
      (next, context) => async (args) => {
        const output = await next(args);
        if (context.commandName === 'TransactWriteItemsCommand') caller.abort(new Error('the caller gave up'));
        return output;
      },
      { step: 'initialize', name: 'giveUpDuringTheTransaction' },
    );
    const error = await rejectionOf(client('quitter', dynamoDB).acquireLocks(KEYS, { signal: caller.signal }));
    expect(error).toMatchObject({ message: 'the caller gave up' });
    await waitUntil('every lock released', async () => (await stored(KEYS)).every(({ rvn }) => rvn === undefined));
  });

  it('a waiting group ends with LockClientClosedError when its client closes, holding nothing', async () => {
    // Heartbeats a period of 5 s apart: none lands while the table is read below.
    const holder = await bed.client({ ownerName: 'holder', leaseDuration: 20_000, heartbeatPeriod: 5_000 }).acquireLock('ledger');
    const closing = client('group');
    const acquiring = watch(closing.acquireLocks(KEYS, { refreshPeriod: 100, additionalTimeToWaitForLock: 20_000 }));
    await sleep(300);
    await closing.close();
    expect(await rejectionOf(acquiring.promise)).toMatchObject({ name: 'LockClientClosedError' });
    expect(await stored(KEYS)).toEqual([
      { owner: undefined, rvn: undefined },
      { owner: undefined, rvn: undefined },
      { owner: 'holder', rvn: holder.recordVersionNumber },
    ]);
  });

  it('aborts the group signal when any one of its locks is lost', async () => {
    const group = await client('group').acquireLocks(KEYS);
    const signal = group.signal;
    // Someone else writes one of the items: the lock's next heartbeat is refused.
    await bed.raw.send(new PutItemCommand({ TableName: bed.tableName, Item: THIEF }));
    await rejectionOf(group.locks[2]!.sendHeartbeat());
    expect(signal.aborted).toBe(true);
    expect(isLockLostError(signal.reason)).toBe(true);
    expect(signal.reason).toMatchObject({ partitionKey: 'ledger', kind: 'taken' });
    expect(group.locks[0]!.isHeld()).toBe(true);
    expect(group.isHeld()).toBe(false);
  });
});
