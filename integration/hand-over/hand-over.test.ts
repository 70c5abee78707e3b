/**
 * Handing a lock over (docs/hand-over.md): `lock.handOff()` in one client,
 * `client.adoptLock(handle)` in another, against DynamoDB Local. At no
 * moment do two clients keep the lock: the handing-off client has stopped
 * before the handle exists, and of two adoptions of one handle one wins.
 */
import { describe, expect, it } from '@jest/globals';
import { isLockHandOffError, LockHandOffError, LockLostError, type LockHandOff } from '../../src/index.js';
import { useLockTestBed } from '../../test-kit/jest/lock-test-bed-hook.js';
import { javaReadLockItem, javaStaleLockTakeover } from '../../test-kit/java-items.js';
import { loadJavaScenarios } from '../../test-kit/java-fixtures.js';
import { PutItemCommand, type DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { fileURLToPath } from 'node:url';
import { rejectionOf, sleep, waitUntil } from '../../test-kit/test-locks.js';
import { LIVE_LEASE_MS } from '../../test-kit/live-lease.js';

const LEASE = 1_000;
const HEARTBEAT = 250;
const ADOPTER = fileURLToPath(new URL('../../test-kit/programs/adopter-process.ts', import.meta.url));

const bed = useLockTestBed('hand-over');

const client = (ownerName: string, leaseDuration = LEASE) => bed.client({ ownerName, leaseDuration, heartbeatPeriod: HEARTBEAT });

describe('a lock handed off and adopted', () => {
  it('stops in the first client, with a signal that says hand-off, and is held by the adopter under its own owner name', async () => {
    const first = client('first');
    const second = client('second', LIVE_LEASE_MS);
    const lock = await first.acquireLock('job', { data: 'step 1' });
    const handle = await lock.handOff();

    expect(lock.state).toBe('handedOff');
    expect(lock.isHeld()).toBe(false);
    expect(lock.signal.aborted).toBe(true);
    expect(lock.signal.reason).toBeInstanceOf(LockLostError);
    expect((lock.signal.reason as LockLostError).kind).toBe('handedOff');
    expect(first.hasLock('job')).toBe(false);
    expect(handle).toEqual({
      format: 'dynamodb-lock/hand-off',
      version: 1,
      tableName: bed.tableName,
      partitionKeyName: 'key',
      partitionKey: 'job',
      ownerName: 'first',
      recordVersionNumber: lock.recordVersionNumber,
      leaseDuration: LEASE,
      deleteLockOnRelease: true,
    });
    // No heartbeat of the first client moves the item after the hand-off.
    await sleep(2 * HEARTBEAT);
    expect(await bed.rvn('job')).toBe(handle.recordVersionNumber);

    const adopted = await second.adoptLock(JSON.parse(JSON.stringify(handle)) as LockHandOff);
    expect(adopted.ownerName).toBe('second');
    expect(adopted.recordVersionNumber).not.toBe(handle.recordVersionNumber);
    expect(adopted.dataText).toBe('step 1');
    expect(second.hasLock('job')).toBe(true);
    // Kept past a lease by the adopter's heartbeats.
    await sleep(LIVE_LEASE_MS + 500);
    expect(adopted.isHeld()).toBe(true);
    expect(await bed.owner('job')).toBe('second');
    // The table carries the adopter's RVN once its heartbeat in flight, if any, has been answered.
    await waitUntil('the table shows the RVN the adopter holds', async () => (await bed.rvn('job')) === adopted.recordVersionNumber);
    // The first client's scope ending after the hand-off writes nothing.
    expect(await lock.release()).toBe(false);
    expect(await bed.owner('job')).toBe('second');

    expect(await adopted.release()).toBe(true);
    expect(await bed.item('job')).toBeUndefined();
  });

  it('is seen by a Java-shaped reader as an ordinary lock of the adopter', async () => {
    const lock = await client('first').acquireLock('java-view', { data: 'payload', additionalAttributes: { step: 2 } });
    // No background heartbeat: the item read right after the adoption carries the adopter's RVN.
    const second = bed.client({ ownerName: 'second', leaseDuration: 3_000, heartbeatPeriod: HEARTBEAT, backgroundHeartbeats: false });
    const adopted = await second.adoptLock(await lock.handOff());
    const item = await bed.item('java-view');
    const java = javaReadLockItem(item!, 'key');
    expect(java).toEqual(
      expect.objectContaining({
        ownerName: 'second',
        recordVersionNumber: adopted.recordVersionNumber,
        leaseDuration: 3_000n,
        isReleased: false,
      }),
    );
    expect(new TextDecoder().decode(java.data)).toBe('payload');
    expect(adopted.additionalAttributes).toEqual({ step: 2 });
  });

  it('can be handed off again, and adopted by a third client, from its JSON text', async () => {
    const lock = await client('first').acquireLock('relay');
    const second = await client('second').adoptLock(await lock.handOff());
    const again = await second.handOff();
    expect(again.ownerName).toBe('second');
    const third = await client('third', LIVE_LEASE_MS).adoptLock(JSON.stringify(again));
    expect(await bed.owner('relay')).toBe('third');
    expect(third.isHeld()).toBe(true);
  });

  it('adopted twice at once is held by one adopter: the other is refused as moved on', async () => {
    const handle = await (await client('first').acquireLock('twice')).handOff();
    const results = await Promise.allSettled([client('a').adoptLock(handle), client('b').adoptLock(handle)]);
    const won = results.filter((result) => result.status === 'fulfilled');
    const refused = results.flatMap((result) => (result.status === 'rejected' ? [result.reason as unknown] : []));
    expect(won).toHaveLength(1);
    expect(refused).toHaveLength(1);
    expect(isLockHandOffError(refused[0])).toBe(true);
    expect((refused[0] as LockHandOffError).code).toBe('MOVED_ON');
    expect((refused[0] as LockHandOffError).holder?.ownerName).toBe(await bed.owner('twice'));
  });

  it('is refused once someone took the lock over after the handle waited more than a lease', async () => {
    const handle = await (await client('first').acquireLock('taken')).handOff();
    // A waiter (ours, Java's rule) takes the lock over once its RVN stood still for a lease. Its own lease is long and
    // unrenewed: the RVN the refusal names is the one it won, and it still holds the lock after the refused adoption.
    const taker = await bed
      .client({ ownerName: 'taker', leaseDuration: 20_000, heartbeatPeriod: HEARTBEAT, backgroundHeartbeats: false })
      .acquireLock('taken', { additionalTimeToWaitForLock: 5_000 });
    const error = await rejectionOf(client('late').adoptLock(handle));
    expect(error).toBeInstanceOf(LockHandOffError);
    expect(error).toMatchObject({ code: 'MOVED_ON', holder: { ownerName: 'taker', recordVersionNumber: taker.recordVersionNumber } });
    expect(taker.isHeld()).toBe(true);
  });

  it('is still adopted after more than a lease when nobody took it over: the RVN is unchanged', async () => {
    const handle = await (await client('first').acquireLock('waited')).handOff();
    await sleep(LEASE + 200);
    const adopted = await client('second').adoptLock(handle);
    expect(adopted.isHeld()).toBe(true);
    expect(await bed.owner('waited')).toBe('second');
  });

  it('is refused after the adopter released it, and after the item was released and kept', async () => {
    const handle = await (await client('first').acquireLock('released', { deleteLockOnRelease: false })).handOff();
    const adopted = await client('second').adoptLock(handle);
    expect(adopted.deleteLockOnRelease).toBe(false);
    await adopted.release();
    expect(await rejectionOf(client('third').adoptLock(handle))).toMatchObject({ code: 'MOVED_ON' });
    const again = await client('fourth').acquireLock('released');
    const second = await again.handOff();
    await client('fifth')
      .adoptLock(second)
      .then((lock) => lock.release());
    expect(await rejectionOf(client('sixth').adoptLock(second))).toMatchObject({ code: 'MOVED_ON' });
  });

  it('refuses a handle of another table before sending anything', async () => {
    const handle = await (await client('first').acquireLock('other-table')).handOff();
    const error = await rejectionOf(client('second').adoptLock({ ...handle, tableName: 'another-table' }));
    expect(error).toMatchObject({ name: 'LockHandOffError', code: 'OTHER_TABLE' });
    expect(await bed.owner('other-table')).toBe('first');
  });

  it('is adopted by another process, the next step of a workflow, which keeps and releases it', async () => {
    const lock = await client('step-1').acquireLock('workflow', { data: 'from step 1' });
    const handle = await lock.handOff();
    const next = bed.spawnReporter(ADOPTER, [
      bed.tableName,
      'step-2',
      JSON.stringify(handle),
      String(LIVE_LEASE_MS + 500),
      String(LIVE_LEASE_MS),
    ]);
    const adopted = await next.next('adopted');
    expect(adopted).toMatchObject({ data: 'from step 1' });
    expect(await bed.owner('workflow')).toBe('step-2');
    // Its heartbeats keep the lock past its lease.
    expect(await next.next('kept')).toMatchObject({ held: true });
    expect(await next.next('released')).toMatchObject({ released: true });
    expect(await bed.item('workflow')).toBeUndefined();
  });
});

describe('an adoption whose caller gave up while the adopting write was in flight', () => {
  it('leaves no lock held: what it won is released at once, and the call rejects with the reason', async () => {
    const handle = await (await client('first').acquireLock('given-up')).handOff();
    const caller = new AbortController();
    const raw = bed.dynamoDBClient('late-abort');
    // The adopting write succeeds, and the caller gives up just as its reply arrives.
    const dynamoDB = {
      send: async (command: never, options?: never): Promise<unknown> => {
        const output: unknown = await raw.send(command, options);
        const input = (command as { input?: { ExpressionAttributeValues?: Record<string, unknown> } }).input;
        if (input?.ExpressionAttributeValues?.[':newOn'] !== undefined) caller.abort(new Error('the caller gave up'));
        return output;
      },
    } as unknown as Pick<DynamoDBClient, 'send'>;
    const adopter = bed.client({ ownerName: 'adopter', leaseDuration: LEASE, heartbeatPeriod: HEARTBEAT }, dynamoDB);
    const error = await rejectionOf(adopter.adoptLock(handle, { signal: caller.signal }));
    expect(error).toMatchObject({ message: 'the caller gave up' });
    expect(adopter.hasLock('given-up')).toBe(false);
    expect(await bed.item('given-up')).toBeUndefined();
  });
});

describe('an adoption racing a Java waiter that takes the handed-off lock over', () => {
  const scenarios = loadJavaScenarios();
  const javaTakesOver = (rvn: string): Promise<unknown> =>
    bed.raw.send(new PutItemCommand(javaStaleLockTakeover(scenarios, bed.tableName, rvn)));

  it('loses to a takeover written first: refused as moved on, naming the Java holder', async () => {
    const handle = await (await client('first').acquireLock('lock-1')).handOff();
    await javaTakesOver(handle.recordVersionNumber);
    const error = await rejectionOf(client('late').adoptLock(handle));
    expect(error).toMatchObject({ code: 'MOVED_ON', holder: { ownerName: await bed.owner('lock-1') } });
    expect(await bed.owner('lock-1')).not.toBe('late');
  });

  it("sent at the same moment, lets exactly one of them hold the lock, and the item is the winner's", async () => {
    const handle = await (await client('first').acquireLock('lock-1')).handOff();
    // No background heartbeat: the table keeps the RVN the adoption wrote.
    const adopter = bed.client({ ownerName: 'adopter', leaseDuration: LEASE, heartbeatPeriod: HEARTBEAT, backgroundHeartbeats: false });
    const [adopted, java] = await Promise.allSettled([adopter.adoptLock(handle), javaTakesOver(handle.recordVersionNumber)]);
    expect([adopted.status, java.status].sort()).toEqual(['fulfilled', 'rejected']);
    if (adopted.status === 'fulfilled') {
      expect(await bed.owner('lock-1')).toBe('adopter');
      expect(await bed.rvn('lock-1')).toBe(adopted.value.recordVersionNumber);
      expect(java).toMatchObject({ reason: { name: 'ConditionalCheckFailedException' } });
    } else {
      expect(adopted.reason).toMatchObject({ code: 'MOVED_ON' });
      expect(await bed.owner('lock-1')).not.toBe('adopter');
      expect(adopter.hasLock('lock-1')).toBe(false);
    }
  });
});

describe('a hand-off that cannot give a handle', () => {
  it('made twice at once gives one handle; the other call throws, the lock being handed off already', async () => {
    const lock = await client('first').acquireLock('handed-twice');
    const results = await Promise.allSettled([lock.handOff(), lock.handOff()]);
    const handles = results.flatMap((result) => (result.status === 'fulfilled' ? [result.value] : []));
    const errors = results.flatMap((result) => (result.status === 'rejected' ? [result.reason as unknown] : []));
    expect(handles).toHaveLength(1);
    expect(errors).toEqual([expect.objectContaining({ name: 'LockLostError', kind: 'handedOff' })]);
    await client('second').adoptLock(handles[0]!);
    expect(await bed.owner('handed-twice')).toBe('second');
  });

  it('of a lock past its safe time throws its loss, and leaves no handle to adopt', async () => {
    const first = bed.client({ ownerName: 'first', leaseDuration: LEASE, heartbeatPeriod: HEARTBEAT, backgroundHeartbeats: false });
    const lock = await first.acquireLock('expired');
    await sleep(LEASE);
    expect(await rejectionOf(lock.handOff())).toMatchObject({ name: 'LockLostError', kind: 'expired' });
    expect(lock.state).toBe('lost');
  });
});

describe('an adoption in an invocation that ends (invocationDeadline)', () => {
  /** The adopter's invocation: 5 s left, stopped at most 500 ms after; its configured lease (margin 2 s) is far longer. */
  const REMAINING_MS = 5_000;
  const KILL_OVERRUN_MS = 500;
  const ADOPTER_LEASE = 20_000;

  it("bounds the adopter's lease and safe time by its own invocation, not by the handing-off one's", async () => {
    const first = client('first', 3_000);
    // The handing-off invocation ends first: its deadline is not the adopter's.
    const lock = await first.acquireLock('bounded', { invocationDeadline: { remainingMs: 1_000, killOverrunMs: 0 } });
    const handle = await lock.handOff();
    const adopter = bed.client({ ownerName: 'adopter', leaseDuration: ADOPTER_LEASE, heartbeatPeriod: HEARTBEAT });
    const deadline = performance.now() + REMAINING_MS;
    const sentBy = performance.now();
    const adopted = await adopter.adoptLock(handle, { invocationDeadline: { at: deadline, killOverrunMs: KILL_OVERRUN_MS } });
    const stated = Number((await bed.item('bounded'))?.['leaseDuration']?.S);
    expect(stated).toBeLessThanOrEqual(deadline + KILL_OVERRUN_MS - sentBy);
    // Far more than the handing-off invocation's 1 s would allow.
    expect(stated).toBeGreaterThan(2_000);
    await sleep(1_000);
    expect(adopted.isHeld()).toBe(true);
    const ended = new Promise<unknown>((resolve) => adopted.signal.addEventListener('abort', () => resolve(adopted.signal.reason)));
    expect(await ended).toMatchObject({ name: 'LockLostError', kind: 'deadline' });
    expect(performance.now()).toBeLessThan(deadline);
    expect(Number((await bed.item('bounded'))?.['leaseDuration']?.S)).toBeLessThan(REMAINING_MS + KILL_OVERRUN_MS);
  }, 20_000);

  it('refuses a bad deadline with a typed error before sending anything', async () => {
    const handle = await (await client('first').acquireLock('bad-deadline')).handOff();
    const adopter = client('adopter');
    for (const [invocationDeadline, code] of [
      [{ remainingMs: Number.NaN }, 'INVALID_DEADLINE'],
      ['soon', 'INVALID_DEADLINE'],
      [{ remainingMs: 50 }, 'DEADLINE_TOO_SOON'],
    ] as const) {
      const error = await rejectionOf(adopter.adoptLock(handle, { invocationDeadline } as never));
      expect(error).toMatchObject({ name: 'InvalidArgumentError', code });
    }
    expect(await bed.owner('bad-deadline')).toBe('first');
  });
});
