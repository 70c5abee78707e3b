/**
 * A resignation (or release) whose first DeleteItem was applied and its reply
 * lost, and whose SDK retry then met the next leader's item: the hand-over
 * was orderly, so `resign()` reports it done and no `lost` event fires. The
 * lock was within its safe time when the refusal came, so nobody could have
 * taken its item over before the first attempt landed (DESIGN.md, "A retried
 * release"); a refusal past the safe time stays a loss.
 */
import { describe, expect, it } from '@jest/globals';
import { LeaderElection } from '../../src/index.js';
import { useFaultBed } from '../../test-kit/jest/fault-bed.js';
import { recordEvents, within } from '../../test-kit/jest/lock-events.js';
import { dynamoDBErrorReply, FaultProxy, operationOf, type ProxiedRequest } from '../../test-kit/fault-proxy.js';

const faults = useFaultBed('retried-resignation');

const isDeleteItem = (request: ProxiedRequest): boolean => operationOf(request) === 'DeleteItem';

describe('a resignation whose SDK retry meets the next leader', () => {
  it('resign() returns true, no lost event fires, and the next candidate leads', async () => {
    const network = await faults.proxied('leader', { sdkDefaults: true });
    const leaderClient = faults.bed.client({ ownerName: 'leader', leaseDuration: 5_000, heartbeatPeriod: 1_000 }, network.dynamoDB);
    const events = recordEvents(leaderClient);
    const leadership = await new LeaderElection(leaderClient, 'hand-over').campaign();
    const next = new LeaderElection(faults.bed.client({ ownerName: 'next' }), 'hand-over', { refreshPeriod: 50 }).campaign();

    // The first attempt is applied and its reply lost; its retries wait until the next candidate leads.
    const lost = network.proxy.loseReplyThenRetries(isDeleteItem, { action: 'forward', delayMs: 1_000 });
    const resigned = leadership.resign();
    await within(lost, 5_000, 'the lost reply of the resignation');
    const nextLeadership = await within(next, 5_000, 'the next candidate leads');
    const resignedResult = await resigned;

    const deletes = network.proxy.exchanges.filter((e) => isDeleteItem(e.request));
    expect(deletes.map((e) => FaultProxy.attemptOf(e.request))).toEqual([1, 2]);
    expect(resignedResult).toBe(true);
    expect(events.of('lost')).toEqual([]);
    expect(leadership.isLeader).toBe(false);
    expect(nextLeadership.isLeader).toBe(true);
    expect(await faults.bed.owner('hand-over')).toBe('next');
  });

  it('past the safe time, a retry that meets another holder is still no release: release() returns false', async () => {
    const network = await faults.proxied('lapsed', { sdkDefaults: true });
    const holder = faults.bed.client({ ownerName: 'lapsed', leaseDuration: 1_500, heartbeatPeriod: 300 }, network.dynamoDB);
    const lock = await holder.acquireLock('taken-over');
    // Its heartbeats vanish: the lock lapses, and a waiter takes it over once its RVN stood still for a lease.
    network.proxy.setRule((request) => (operationOf(request) === 'UpdateItem' ? { action: 'blackhole' } : { action: 'forward' }));
    const taker = faults.bed.client({ ownerName: 'taker' });
    await within(taker.acquireLock('taken-over', { refreshPeriod: 100, additionalTimeToWaitForLock: 5_000 }), 10_000, 'the takeover');
    expect(lock.state).toBe('lost');

    const lost = network.proxy.loseReplyThenRetries(isDeleteItem, { action: 'forward' });
    const released = lock.release();
    await within(lost, 5_000, 'the lost reply of the release');

    expect(await released).toBe(false);
    expect(network.proxy.exchanges.filter((e) => isDeleteItem(e.request)).length).toBeGreaterThan(1);
    expect(await faults.bed.owner('taken-over')).toBe('taker');
  });
  it('a safe time kept through 503s (holdLockOnServiceUnavailable) proves nothing: a retry that meets the taker is no release', async () => {
    const network = await faults.proxied('kept', { sdkDefaults: true });
    // Each heartbeat's 503 comes after the SDK's backoffs (up to 600 ms over three attempts), and the holder
    // counts on only while 503s keep coming within its safe time: a lease of 3 s leaves a busy CI machine's
    // event loop more than a second of lag before the holder lets its lock go.
    const holder = faults.bed.client(
      { ownerName: 'kept', leaseDuration: 3_000, heartbeatPeriod: 300, holdLockOnServiceUnavailable: true },
      network.dynamoDB,
    );
    const events = recordEvents(holder);
    const lock = await holder.acquireLock('kept-through-503');
    // Every heartbeat meets a 503: the holder keeps counting its lease from each answer, while the
    // RVN in the table stands still and a waiter takes the lock over after a lease.
    let deletes = 0;
    network.proxy.setRule((request) => {
      const operation = operationOf(request);
      if (operation === 'UpdateItem') return { action: 'respond', reply: dynamoDBErrorReply('ServiceUnavailable') };
      // The release's first attempt meets a 503 too (nothing applied); the SDK's retry reaches the table.
      if (operation === 'DeleteItem' && ++deletes === 1) return { action: 'respond', reply: dynamoDBErrorReply('ServiceUnavailable') };
      return { action: 'forward' };
    });
    const taker = faults.bed.client({ ownerName: 'taker' });
    await within(taker.acquireLock('kept-through-503', { refreshPeriod: 100, additionalTimeToWaitForLock: 5_000 }), 10_000, 'the takeover');
    expect(lock.state).toBe('held'); // the unsafe option at work: two holders

    const released = await lock.release();

    expect(deletes).toBeGreaterThan(1);
    expect(await faults.bed.owner('kept-through-503')).toBe('taker');
    // Our delete was never applied: the taker's item is not a hand-over, and the holder must learn it was taken.
    expect(released).toBe(false);
    expect(events.of('lost').map((lost) => lost.event.error.kind)).toEqual(['taken']);
  });
});
