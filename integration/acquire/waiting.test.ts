/**
 * Waiting for a held lock (PROTOCOL.md §5.4) against DynamoDB Local: the
 * takeover is written at the instant the RVN has been unchanged for its
 * lease, a refused takeover's ALL_OLD item restarts the timer without a read,
 * and the waiters of one client share one polling loop per lock.
 */
import { describe, expect, it } from '@jest/globals';
import { LockNotGrantedError, type Lock } from '../../src/index.js';
import { countCalls } from '../../test-kit/call-counter.js';
import { lockRequests, recording, sleep, waitUntil, watch } from '../../test-kit/test-locks.js';
import { useLockTestBed } from '../../test-kit/jest/lock-test-bed-hook.js';
import { LIVE_LEASE_MS } from '../../test-kit/live-lease.js';

const LEASE = 1_000;
const HEARTBEAT = 250;
// For a waiter whose requests are compared exactly: a heartbeat period far above any late reply, so that
// winning never adds a renewal UpdateItem.
const COUNTED_WAITER = { leaseDuration: 8_000, heartbeatPeriod: 2_000 } as const;

const bed = useLockTestBed('acquire-waiting');

describe('precise takeover', () => {
  it('a heartbeat seen only through the refused takeover restarts the timer, and the next takeover is conditioned on the new RVN', async () => {
    const holder = bed.client({ ownerName: 'holder', leaseDuration: LIVE_LEASE_MS, heartbeatPeriod: HEARTBEAT, backgroundHeartbeats: false });
    const waiterDynamoDB = bed.dynamoDBClient('waiter');
    const answers = countCalls(waiterDynamoDB);
    const recorder = recording(waiterDynamoDB);
    const waiter = bed.client({ ownerName: 'waiter', ...COUNTED_WAITER }, recorder.dynamoDB);
    const held = await holder.acquireLock('beating');
    const firstRvn = held.recordVersionNumber;

    // No poll for 20 s: whatever the waiter learns, it learns from its own writes.
    const waiting = watch(waiter.acquireLock('beating', { refreshPeriod: 20_000, additionalTimeToWaitForLock: 10_000 }));
    // Answered: the client's one check of the table (DescribeTable), then the new-lock write.
    await waitUntil('the waiter’s new-lock write was refused', () => answers.answered() === 2);
    await holder.sendHeartbeat(held); // one last heartbeat, then the holder falls silent
    const secondRvn = held.recordVersionNumber;
    expect(secondRvn).not.toBe(firstRvn);

    const lock = await waiting.promise;
    const puts = lockRequests(recorder).map((command) => ({
      name: command.name,
      condition: command.input['ConditionExpression'],
      rvn: (command.input['ExpressionAttributeValues'] as Record<string, { S?: string }> | undefined)?.[':rvn']?.S,
    }));
    expect(puts).toEqual([
      { name: 'PutItemCommand', condition: 'attribute_not_exists(#pk)', rvn: undefined },
      { name: 'PutItemCommand', condition: 'attribute_exists(#pk) AND #rvn = :rvn', rvn: firstRvn },
      { name: 'PutItemCommand', condition: 'attribute_exists(#pk) AND #rvn = :rvn', rvn: secondRvn },
    ]);
    expect(lock.ownerName).toBe('waiter');
    expect(await bed.owner('beating')).toBe('waiter');
  }, 20_000);

  it('a waiter whose takeover finds the lock released takes it with the released-lock write, without a read', async () => {
    const holder = bed.client({ ownerName: 'holder', leaseDuration: LIVE_LEASE_MS, heartbeatPeriod: HEARTBEAT, backgroundHeartbeats: false });
    const waiterDynamoDB = bed.dynamoDBClient('waiter');
    const answers = countCalls(waiterDynamoDB);
    const recorder = recording(waiterDynamoDB);
    const waiter = bed.client({ ownerName: 'waiter', ...COUNTED_WAITER }, recorder.dynamoDB);
    const held = await holder.acquireLock('released-meanwhile', { deleteLockOnRelease: false });

    const waiting = watch(waiter.acquireLock('released-meanwhile', { refreshPeriod: 20_000, additionalTimeToWaitForLock: 10_000 }));
    // Answered: the client's one check of the table (DescribeTable), then the new-lock write.
    await waitUntil('the waiter’s new-lock write was refused', () => answers.answered() === 2);
    // Marked released, with a new RVN: the waiter's takeover (conditioned on the old RVN) is refused and returns the released item.
    expect(await held.release()).toBe(true);

    const lock = await waiting.promise;
    expect(lockRequests(recorder).map((command) => [command.name, command.input['ConditionExpression']])).toEqual([
      ['PutItemCommand', 'attribute_not_exists(#pk)'],
      ['PutItemCommand', 'attribute_exists(#pk) AND #rvn = :rvn'],
      ['PutItemCommand', 'attribute_exists(#pk) AND #ir = :ir'],
    ]);
    expect(lock.ownerName).toBe('waiter');
    expect((await bed.item('released-meanwhile'))?.['isReleased']).toBeUndefined();
  }, 20_000);
});

describe('waiters of one client share one polling loop per lock', () => {
  it('one read at a time serves them all; each decides and writes for itself; the loop stops when the last leaves', async () => {
    const holder = bed.client({ ownerName: 'holder', leaseDuration: LIVE_LEASE_MS, heartbeatPeriod: HEARTBEAT });
    const recorder = recording(bed.dynamoDBClient('waiters'));
    const waiters = bed.client({ ownerName: 'waiters', leaseDuration: LEASE, heartbeatPeriod: HEARTBEAT }, recorder.dynamoDB);
    const held = await holder.acquireLock('shared-wait');

    const reads = () => recorder.named('GetItemCommand').length;
    // Hold the first poll for 1.5 s, fifteen refresh periods: polling loops of their own would each read meanwhile.
    let releaseRead!: () => void;
    const readHeld = new Promise<void>((resolve) => (releaseRead = resolve));
    let holding = true;
    recorder.hold = (command) => (holding && command.name === 'GetItemCommand' ? readHeld : undefined);

    const acquired: Lock[] = [];
    const waiting = [1, 2, 3].map(() =>
      watch(
        waiters.acquireLock('shared-wait', { refreshPeriod: 100, additionalTimeToWaitForLock: 20_000 }).then(async (lock) => {
          acquired.push(lock);
          await lock.release(); // hand it to the next waiter
          return lock;
        }),
      ),
    );
    await waitUntil('all three waiters sent their new-lock write and the first poll went out', () => reads() >= 1);
    await sleep(1_500);
    expect(reads()).toBe(1);
    holding = false;
    releaseRead();

    // The holder lets go; the waiters, one after the other, get the lock and release it.
    expect(await holder.releaseLock(held)).toBe(true);
    const locks = await Promise.all(waiting.map((w) => w.promise));
    expect(new Set(locks.map((lock) => lock.recordVersionNumber)).size).toBe(3);
    expect(acquired.map((lock) => lock.ownerName)).toEqual(['waiters', 'waiters', 'waiters']);

    // Nobody waits any more: the loop has stopped.
    const readsAfter = reads();
    await sleep(500);
    expect(reads()).toBe(readsAfter);
  }, 30_000);

  it('a waiter that gives up leaves the loop to the others', async () => {
    const holder = bed.client({ ownerName: 'holder', leaseDuration: LIVE_LEASE_MS, heartbeatPeriod: HEARTBEAT });
    const recorder = recording(bed.dynamoDBClient('waiters'));
    const waiters = bed.client({ ownerName: 'waiters', leaseDuration: LEASE, heartbeatPeriod: HEARTBEAT }, recorder.dynamoDB);
    const held = await holder.acquireLock('give-up');

    const impatient = watch(waiters.acquireLock('give-up', { refreshPeriod: 100, additionalTimeToWaitForLock: 0 }));
    const patient = watch(waiters.acquireLock('give-up', { refreshPeriod: 100, additionalTimeToWaitForLock: 20_000 }));
    await expect(impatient.promise).rejects.toBeInstanceOf(LockNotGrantedError);
    const readsWhenItLeft = recorder.named('GetItemCommand').length;
    await waitUntil('the loop polls on for the patient waiter', () => recorder.named('GetItemCommand').length > readsWhenItLeft + 2);
    expect(patient.settled()).toBe(false);

    expect(await holder.releaseLock(held)).toBe(true);
    const lock = await patient.promise;
    expect(lock.ownerName).toBe('waiters');
  }, 30_000);
});
