/**
 * A lock taken, deleted or marked released behind its holder's back: the
 * holder's next heartbeat is refused, and the holder must learn it at once,
 * through lock.signal and the `lost` event, with the right kind of loss.
 */
import { describe, expect, it } from '@jest/globals';
import { LockLostError, type LockLossKind } from '../../src/index.js';
import { useFaultBed } from '../../test-kit/jest/fault-bed.js';
import { abortOf, expectLostOnce, recordEvents, thrownBy } from '../../test-kit/jest/lock-events.js';
import { deleteLockItem, markReleased, stealLock } from '../../test-kit/tamper.js';
import { sleep } from '../../test-kit/test-locks.js';

const LEASE_MS = 2_000;
const HEARTBEAT_MS = 400;
/** One heartbeat period, plus generous slack for a busy machine; still well short of the lease. */
const NOTICE_WITHIN_MS = HEARTBEAT_MS + 1_000;

const faults = useFaultBed('hb-loss');

async function holdThenTamper(key: string, tamper: () => Promise<unknown>) {
  const client = faults.bed.client({ ownerName: `holder-${key}`, leaseDuration: LEASE_MS, heartbeatPeriod: HEARTBEAT_MS });
  const events = recordEvents(client);
  const lock = await client.acquireLock(key);
  await tamper();
  const tamperedAt = performance.now();
  const aborted = await abortOf(lock.signal, NOTICE_WITHIN_MS + 2_000);
  // The same error must not be reported twice, e.g. by a heartbeat already in flight.
  await sleep(2 * HEARTBEAT_MS);
  return { lock, events, aborted, noticedAfterMs: aborted.at - tamperedAt };
}

function expectLoss(reason: unknown, kind: LockLossKind): LockLostError {
  expect(reason).toBeInstanceOf(LockLostError);
  const error = reason as LockLostError;
  expect(error.kind).toBe(kind);
  return error;
}

describe('a held lock changed behind its holder', () => {
  it('taken over by another client: signal aborts within about a heartbeat, kind "taken", naming the thief', async () => {
    let thiefRvn = '';
    const { lock, events, aborted, noticedAfterMs } = await holdThenTamper('stolen', async () => {
      thiefRvn = await stealLock(faults.bed, 'stolen', 'thief');
    });

    const error = expectLoss(aborted.reason, 'taken');
    expect(error.holder?.ownerName).toBe('thief');
    expect(error.holder?.recordVersionNumber).toBe(thiefRvn);
    expect(noticedAfterMs).toBeLessThan(NOTICE_WITHIN_MS);
    expect(lock.state).toBe('lost');
    expectLostOnce(events, lock, error);
    // The holder left the thief's item alone.
    expect(await faults.bed.rvn('stolen')).toBe(thiefRvn);
    expect(await faults.bed.owner('stolen')).toBe('thief');
  }, 20_000);

  it('deleted: kind "deleted"', async () => {
    const { lock, events, aborted, noticedAfterMs } = await holdThenTamper('deleted', () => deleteLockItem(faults.bed, 'deleted'));

    const error = expectLoss(aborted.reason, 'deleted');
    expect(error.holder).toBeUndefined();
    expect(noticedAfterMs).toBeLessThan(NOTICE_WITHIN_MS);
    expect(lock.state).toBe('lost');
    expectLostOnce(events, lock, error);
    expect(await faults.bed.item('deleted')).toBeUndefined();
  }, 20_000);

  it('marked released by someone else: kind "released"', async () => {
    const { lock, events, aborted, noticedAfterMs } = await holdThenTamper('released', () => markReleased(faults.bed, 'released'));

    const error = expectLoss(aborted.reason, 'released');
    expect(error.holder?.isReleased).toBe(true);
    expect(noticedAfterMs).toBeLessThan(NOTICE_WITHIN_MS);
    expect(lock.state).toBe('lost');
    expectLostOnce(events, lock, error);
    expect(thrownBy(() => lock.throwIfLost())).toBe(error);
    // A late heartbeat must not have revived it.
    expect((await faults.bed.item('released'))?.['isReleased']?.S).toBe('1');
  }, 20_000);

  it('released by its holder: signal aborts with kind "released", and no `lost` event', async () => {
    const client = faults.bed.client({ ownerName: 'own-release', leaseDuration: LEASE_MS, heartbeatPeriod: HEARTBEAT_MS });
    const events = recordEvents(client);
    const lock = await client.acquireLock('own-release');

    expect(await lock.release()).toBe(true);

    expectLoss(lock.signal.reason, 'released');
    expect(lock.state).toBe('released');
    expect(thrownBy(() => lock.throwIfLost())).toBe(lock.signal.reason);
    expect(events.of('lost')).toEqual([]);
  }, 20_000);
});
