/**
 * Turns (src/acquire/turns.ts) against DynamoDB Local: a client that
 * releases a lock and asks for it again at once stands aside once its turn
 * is over, so that another client's waiter gets the lock; alone, it takes
 * the lock back after one read.
 */
import { describe, expect, it } from '@jest/globals';
import type { Lock } from '../../src/index.js';
import { countCalls } from '../../test-kit/call-counter.js';
import { sleep, watch } from '../../test-kit/test-locks.js';
import { useLockTestBed } from '../../test-kit/jest/lock-test-bed-hook.js';

const REFRESH = 100;

const bed = useLockTestBed('acquire-turns');

describe('turns', () => {
  it('a client re-taking a lock back to back lets the waiter of another client have it', async () => {
    const again = bed.client({ ownerName: 'again' });
    const waiter = bed.client({ ownerName: 'waiter' });
    let lock: Lock = await again.acquireLock('shared', { refreshPeriod: REFRESH });
    const waiting = watch(waiter.acquireLock('shared', { refreshPeriod: REFRESH, additionalTimeToWaitForLock: 30_000 }));
    // Turns of 2 refresh periods: 40 sections of 50 ms are ten turns. Without turns the waiter
    // gets the lock only when its read and write both land between a release and the re-take.
    const waiterHasIt = new AbortController();
    void waiting.promise.finally(() => waiterHasIt.abort());
    let sections = 0;
    while (sections < 40 && !waiting.settled()) {
      await sleep(50);
      await lock.release();
      sections++;
      try {
        lock = await again.acquireLock('shared', { refreshPeriod: REFRESH, additionalTimeToWaitForLock: 30_000, signal: waiterHasIt.signal });
      } catch (error) {
        if (!waiterHasIt.signal.aborted) throw error;
      }
    }
    expect(waiting.settled()).toBe(true);
    const taken = await waiting.promise;
    expect(taken.ownerName).toBe('waiter');
    expect(sections).toBeLessThan(40);
    await taken.release();
  }, 30_000);

  it('alone, a client re-taking a lock back to back stands aside now and then and takes it back after one read', async () => {
    const dynamoDB = bed.dynamoDBClient('alone');
    const calls = countCalls(dynamoDB);
    const alone = bed.client({ ownerName: 'alone' }, dynamoDB);
    for (let i = 0; i < 30; i++) {
      const lock = await alone.acquireLock('alone', { refreshPeriod: REFRESH, turnLength: REFRESH });
      await sleep(10);
      await lock.release();
    }
    // Stood aside after 100 ms of turn, then 200, 400: a read each time, and no write refused.
    const counts = calls.counts();
    expect(counts['GetItem']).toBeGreaterThanOrEqual(2);
    expect(counts['GetItem']).toBeLessThanOrEqual(4);
    expect(counts['PutItem']).toBe(30);
    expect(counts['DeleteItem']).toBe(30);
  }, 30_000);

  it('never stands aside with turnLength Infinity', async () => {
    const dynamoDB = bed.dynamoDBClient('endless');
    const calls = countCalls(dynamoDB);
    const client = bed.client({ ownerName: 'endless' }, dynamoDB);
    for (let i = 0; i < 20; i++) {
      const lock = await client.acquireLock('endless', { refreshPeriod: 20, turnLength: Infinity });
      await sleep(5);
      await lock.release();
    }
    expect(calls.counts()['GetItem']).toBeUndefined();
  }, 30_000);
});
