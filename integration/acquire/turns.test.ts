/**
 * Turns (src/acquire/turns.ts) against DynamoDB Local: with `turnLength`
 * set, a client that releases a lock and asks for it again at once stands
 * aside once its turn is over, so that another client's waiter gets the
 * lock; alone, it takes the lock back after one read; a waiter takes a lock
 * it reads free at once. By default, as in Java, nobody stands aside.
 */
import { describe, expect, it } from '@jest/globals';
import type { AcquireLockOptions, Lock } from '../../src/index.js';
import { countCalls } from '../../test-kit/call-counter.js';
import { sleep, watch } from '../../test-kit/test-locks.js';
import { useLockTestBed } from '../../test-kit/jest/lock-test-bed-hook.js';

const REFRESH = 100;

const bed = useLockTestBed('acquire-turns');

describe('turns', () => {
  it('a client re-taking a lock back to back lets the waiter of another client have it', async () => {
    const again = bed.client({ ownerName: 'again' });
    const waiter = bed.client({ ownerName: 'waiter' });
    const turns = { refreshPeriod: REFRESH, turnLength: REFRESH };
    let lock: Lock = await again.acquireLock('shared', turns);
    const waiting = watch(waiter.acquireLock('shared', { refreshPeriod: REFRESH, additionalTimeToWaitForLock: 30_000 }));
    // Turns of one refresh period: 40 sections of 50 ms are twenty turns. Without turns the waiter
    // gets the lock only when its read and write both land between a release and the re-take.
    const waiterHasIt = new AbortController();
    void waiting.promise.finally(() => waiterHasIt.abort());
    let sections = 0;
    while (sections < 40 && !waiting.settled()) {
      await sleep(50);
      await lock.release();
      sections++;
      try {
        lock = await again.acquireLock('shared', { ...turns, additionalTimeToWaitForLock: 30_000, signal: waiterHasIt.signal });
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

  /** One client alone takes `key` `times` times back to back, holding it `holdMs`; the calls it made, by operation. */
  async function reTakeAlone(key: string, times: number, holdMs: number, options: AcquireLockOptions): Promise<Record<string, number>> {
    const dynamoDB = bed.dynamoDBClient(key);
    const calls = countCalls(dynamoDB);
    const client = bed.client({ ownerName: key }, dynamoDB);
    for (let i = 0; i < times; i++) {
      const lock = await client.acquireLock(key, options);
      await sleep(holdMs);
      await lock.release();
    }
    return calls.counts();
  }

  it('alone, a client re-taking a lock back to back stands aside now and then and takes it back after one read', async () => {
    const counts = await reTakeAlone('alone', 30, 10, { refreshPeriod: REFRESH, turnLength: REFRESH });
    // 30 holds of 10 ms outlast the first turn of 100 ms: a read each time it stood aside, and no write refused.
    // (How often the turn doubles is tested in test/acquire/turns.test.ts.)
    expect(counts['GetItem']).toBeGreaterThanOrEqual(1);
    expect(counts['PutItem']).toBe(30);
    expect(counts['DeleteItem']).toBe(30);
  }, 30_000);

  it('a waiter that had a turn takes the lock at the first read that finds it free', async () => {
    const first = bed.client({ ownerName: 'first' });
    const second = bed.client({ ownerName: 'second' });
    const dynamoDB = bed.dynamoDBClient('after-turn');
    // The waiter's calls, each read marked by what it found. Its poll may land before or after
    // the holder's release() returns, so the calls are kept from the first read that found the lock free.
    const calls: string[] = [];
    dynamoDB.middlewareStack.add(
      (next, context) => async (args) => {
        const result = await next(args);
        const operation = (context.commandName ?? '').replace(/Command$/, '');
        const found = (result.output as { Item?: unknown }).Item === undefined ? 'free' : 'held';
        calls.push(operation === 'GetItem' ? `GetItem ${found}` : operation);
        return result;
      },
      { step: 'initialize', name: 'markReads' },
    );
    const waiter = bed.client({ ownerName: 'waiter' }, dynamoDB);
    const options = { refreshPeriod: REFRESH, additionalTimeToWaitForLock: 30_000 };
    /** `holder` holds the lock while the waiter waits for it, then releases it; the waiter's calls from its first read of the free lock on. */
    async function waitFor(holder: typeof first): Promise<string[]> {
      const held = await holder.acquireLock('after-turn', options);
      calls.length = 0;
      const waiting = waiter.acquireLock('after-turn', options);
      await sleep(2 * REFRESH);
      await held.release();
      const taken = await waiting;
      const sent = calls.slice(calls.indexOf('GetItem free'));
      await taken.release();
      return sent;
    }
    await waitFor(first);
    // After its turn, with another owner than the one it last waited for: once free, the lock is read once and taken.
    expect(await waitFor(second)).toEqual(['GetItem free', 'PutItem']);
  }, 30_000);

  it.each([
    { what: 'by default', options: {} },
    { what: 'with turnLength Infinity', options: { turnLength: Infinity } },
  ])(
    'never stands aside $what: a lone client re-taking its lock sends one write a hold',
    async ({ what, options }) => {
      const counts = await reTakeAlone(`endless ${what}`, 20, 5, { refreshPeriod: 20, ...options });
      expect(counts['GetItem']).toBeUndefined();
      expect(counts['PutItem']).toBe(20);
    },
    30_000,
  );
});
