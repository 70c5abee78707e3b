/**
 * The HeldLock record's own logic: its transitions, its safe time, and
 * one-at-a-time writes.
 */
import { describe, expect, it, jest } from '@jest/globals';
import { LockLostError } from '../../src/base/errors.js';
import { HeldLock, type LockEnded } from '../../src/hold/held-lock.js';
import { LeaseEnd } from '../../src/hold/lease-end.js';
import type { LockState } from '../../src/hold/lock-state.js';
import { lockId, type LockKey } from '../../src/base/lock-key.js';

const key = (partitionKey: string, sortKey?: string): LockKey => (sortKey === undefined ? { partitionKey } : { partitionKey, sortKey });

type HeldLockFields = ConstructorParameters<typeof HeldLock>[0];

/** A clock the test sets: `now` (monotonic) and, when set, `wall`. */
const testClock = { now: 1_000, wall: undefined as number | undefined };
const clock = { now: () => testClock.now, wallNow: () => testClock.wall ?? testClock.now };

function heldLockFields(overrides: Partial<{ lookupTime: number; leaseDurationMs: number; sortKey: string }> = {}): HeldLockFields {
  testClock.now = 1_000;
  testClock.wall = undefined;
  return {
    clock: { now: clock.now },
    key: key('p', overrides.sortKey),
    ownerName: 'me',
    recordVersionNumber: 'rvn-1',
    leaseDurationMs: overrides.leaseDurationMs ?? 100,
    lookupTime: overrides.lookupTime ?? 1_000,
    lookupWallTime: undefined,
    data: undefined,
    additionalAttributes: {},
    deleteLockOnRelease: true,
    // A tenth of the lease, as the client's default.
    marginFor: (leaseDurationMs) => leaseDurationMs / 10,
  };
}

function heldLock(overrides: Parameters<typeof heldLockFields>[0] = {}): HeldLock {
  return new HeldLock(heldLockFields(overrides));
}

describe('HeldLock', () => {
  it('takes its id from lockId and starts held', () => {
    const lock = heldLock({ sortKey: 's' });
    expect(lock.id).toBe(lockId(key('p', 's')));
    expect(lock.partitionKey).toBe('p');
    expect(lock.sortKey).toBe('s');
    expect(lock.state).toBe('held');
  });

  it("Java's reading: the lease runs out strictly after lookupTime + lease on the local clock", () => {
    const lock = heldLock({ lookupTime: 1_000, leaseDurationMs: 100 });
    const ranOutAt = (now: number): boolean => {
      testClock.now = now;
      return lock.leaseRanOut();
    };
    expect(ranOutAt(1_000)).toBe(false);
    expect(ranOutAt(1_100)).toBe(false);
    expect(ranOutAt(1_100.5)).toBe(true);
    lock.confirmWrite({ recordVersionNumber: 'rvn-2', sentAt: 1_050, sentAtWall: undefined, leaseDurationMs: 100 }); // a heartbeat moved it on
    expect(ranOutAt(1_100.5)).toBe(false);
  });

  it.each<[LockState, (lock: HeldLock) => unknown]>([
    ['releasing', (lock: HeldLock) => lock.beginRelease()],
    ['released', (lock: HeldLock) => lock.released()],
    ['lost', (lock: HeldLock) => lock.lose('taken', 'another client holds it')],
  ])('counts as ran out, and not held, once %s', (state, transition) => {
    const lock = heldLock({ lookupTime: 1_000, leaseDurationMs: 100 });
    transition(lock);
    expect(lock.state).toBe(state);
    expect(lock.leaseRanOut()).toBe(true);
    expect(lock.isHeld()).toBe(false);
    expect(() => lock.throwUnlessHeld()).toThrow(LockLostError);
  });

  it('aborts the signal of a lock this client released with a LockLostError, whether the signal was asked for before or after', () => {
    const watched = heldLock();
    const signal = watched.signal;
    watched.released();
    expect(signal.reason).toBeInstanceOf(LockLostError);
    expect((signal.reason as LockLostError).kind).toBe('released');
    expect(watched.endReason).toBe(signal.reason);

    const unwatched = heldLock();
    unwatched.released();
    expect(unwatched.signal.aborted).toBe(true);
    expect(unwatched.signal.reason).toBe(unwatched.endReason);
    expect(unwatched.endReason?.message).toMatch(/released by this client/);
    expect(() => unwatched.throwUnlessHeld()).toThrow(unwatched.endReason);
  });

  it('isHeld: held until its safe time (the lease less the margin) ends, and then ended as expired', () => {
    const ended = jest.fn();
    const lock = new HeldLock({ ...heldLockFields({ lookupTime: 1_000, leaseDurationMs: 100 }), onEnd: ended });
    testClock.now = 1_089;
    expect(lock.isHeld()).toBe(true);
    expect(ended).not.toHaveBeenCalled();
    testClock.now = 1_090;
    expect(lock.isHeld()).toBe(false);
    expect(lock.state).toBe('lost');
    expect(lock.endReason?.kind).toBe('expired');
    expect(lock.signal.aborted).toBe(true);
    expect(ended).toHaveBeenCalledTimes(1);
    expect(ended).toHaveBeenCalledWith(lock, true);
  });

  it('a hand-off aborts the signal as it begins, saying so, and ends quietly; a write refused meanwhile ends it as lost, told', () => {
    const ended = jest.fn<LockEnded>();
    const handed = new HeldLock({ ...heldLockFields(), onEnd: ended });
    const { signal } = handed;
    handed.beginHandOff();
    expect(handed.state).toBe('handingOff');
    expect(handed.isHeld()).toBe(false);
    expect((signal.reason as LockLostError).kind).toBe('handedOff');
    expect(handed.beginRelease()).toBe(false); // the scope's release writes nothing
    handed.handedOff();
    expect(handed.state).toBe('handedOff');
    expect(ended).toHaveBeenCalledWith(handed, false);
    expect(handed.lose('taken', 'too late')).toBe(handed.endReason); // final: nothing moves it
    expect(handed.state).toBe('handedOff');

    const refused = new HeldLock({ ...heldLockFields(), onEnd: ended });
    refused.beginHandOff();
    refused.lose('taken', 'its heartbeat was refused');
    refused.handedOff();
    expect(refused.state).toBe('lost');
    expect(refused.endReason?.kind).toBe('taken');
    expect(ended).toHaveBeenLastCalledWith(refused, true);
  });

  it("a lock bounded by its holder's end: its safe time ends a margin before the deadline, as lost with kind deadline, and it may still be released", () => {
    // Deadline 1 200, margin 30: safe until 1 170, although the lease (1 000 ms from 1 000) would allow 1 900.
    const lock = new HeldLock({ ...heldLockFields({ leaseDurationMs: 1_000 }), leaseEnd: new LeaseEnd(1_200, 2_000, 30) });
    expect(lock.safeUntil()).toBe(1_170);
    testClock.now = 1_169;
    expect(lock.isHeld()).toBe(true);
    testClock.now = 1_170;
    expect(lock.isHeld()).toBe(false);
    expect(lock.endReason).toMatchObject({ name: 'LockLostError', kind: 'deadline' });
    expect(lock.signal.reason).toBe(lock.endReason);
    expect(lock.beginRelease()).toBe(true);
  });

  it("a lock bounded by its holder's end whose heartbeats stopped first expires as any other", () => {
    const lock = new HeldLock({ ...heldLockFields({ leaseDurationMs: 100 }), leaseEnd: new LeaseEnd(5_000, 2_000, 30) });
    testClock.now = 1_090;
    expect(lock.isHeld()).toBe(false);
    expect(lock.endReason?.kind).toBe('expired');
  });

  it('a release aborts the signal as it begins; one that changed nothing may be made again; one of a lapsed lock releases it quietly', () => {
    const ended = jest.fn<LockEnded>();
    const again = new HeldLock({ ...heldLockFields(), onEnd: ended });
    const { signal } = again;
    expect(again.beginRelease()).toBe(true);
    expect(again.isHeld()).toBe(false);
    expect(signal.aborted).toBe(true);
    expect((signal.reason as LockLostError).kind).toBe('released');
    again.releaseUnconfirmed(new Error('throttled'), 'unapplied');
    expect(again.state).toBe('lost');
    expect(ended).toHaveBeenCalledWith(again, false); // its holder hears of it from the release
    expect(again.beginRelease()).toBe(true); // the item is still ours
    again.released();
    expect(again.state).toBe('released');
    expect(again.endReason?.message).toContain('it was released by this client');

    const lapsed = heldLock({ lookupTime: 1_000, leaseDurationMs: 100 });
    testClock.now = 2_000;
    expect(lapsed.isHeld()).toBe(false);
    const reason = lapsed.endReason;
    expect(lapsed.beginRelease()).toBe(true); // it may still be ours in the table
    lapsed.released();
    expect(lapsed.state).toBe('released');
    expect(lapsed.endReason).toBe(reason);
    expect(heldLock().beginRelease()).toBe(true);
    const released = heldLock();
    released.released();
    expect(released.beginRelease()).toBe(false);
  });

  it('queueWrite() runs work one at a time, in call order', async () => {
    const lock = heldLock();
    const events: string[] = [];
    let releaseFirst!: () => void;
    const firstGate = new Promise<void>((resolve) => (releaseFirst = resolve));
    const first = lock.queueWrite(async () => {
      events.push('first:start');
      await firstGate;
      events.push('first:end');
      return 1;
    });
    const second = lock.queueWrite(async () => {
      events.push('second:start');
      return 2;
    });
    for (let i = 0; i < 10; i++) await Promise.resolve();
    expect(events).toEqual(['first:start']);
    releaseFirst();
    await expect(first).resolves.toBe(1);
    await expect(second).resolves.toBe(2);
    expect(events).toEqual(['first:start', 'first:end', 'second:start']);
  });

  it('queueWrite(): a failure reaches its caller only and does not block the next work', async () => {
    const lock = heldLock();
    const boom = new Error('boom');
    const failed = lock.queueWrite(() => Promise.reject(boom));
    const next = lock.queueWrite(async () => 'ok');
    await expect(failed).rejects.toBe(boom);
    await expect(next).resolves.toBe('ok');
    // A synchronous throw inside the work behaves the same.
    const syncFailed = lock.queueWrite((): Promise<never> => {
      throw boom;
    });
    await expect(syncFailed).rejects.toBe(boom);
    await expect(lock.queueWrite(async () => 3)).resolves.toBe(3);
  });

  it('queueWrite(): on an idle lock the work still starts on a later tick, never inside the call', async () => {
    const lock = heldLock();
    await lock.queueWrite(async () => 'earlier, now settled');
    const started: string[] = [];
    const done = lock.queueWrite(async () => {
      started.push('work');
    });
    started.push('after the call');
    await done;
    expect(started).toEqual(['after the call', 'work']);
  });

  it('queueWrite(): a write queued while the lock is idle again still waits for one queued before it', async () => {
    const lock = heldLock();
    await lock.queueWrite(async () => undefined); // the lock went busy and idle once
    const events: string[] = [];
    let releaseFirst!: () => void;
    const first = lock.queueWrite(async () => {
      events.push('first:start');
      await new Promise<void>((resolve) => (releaseFirst = resolve));
      events.push('first:end');
    });
    for (let i = 0; i < 10; i++) await Promise.resolve();
    const second = lock.queueWrite(async () => {
      events.push('second:start');
    });
    for (let i = 0; i < 10; i++) await Promise.resolve();
    expect(events).toEqual(['first:start']);
    releaseFirst();
    await Promise.all([first, second]);
    expect(events).toEqual(['first:start', 'first:end', 'second:start']);
  });

  it('signal: aborts with the end reason, whether it was first read before the lock ended or after', () => {
    const readEarly = heldLock();
    const early = readEarly.signal;
    expect(early.aborted).toBe(false);
    const reason = new LockLostError('taken', 'another client holds it', { partitionKey: 'p', sortKey: undefined });
    expect(readEarly.loseWith(reason)).toBe(true);
    expect(early.aborted).toBe(true);
    expect(early.reason).toBe(reason);
    expect(readEarly.signal).toBe(early);

    const readLate = heldLock();
    readLate.released();
    expect(readLate.signal.aborted).toBe(true);
    expect(readLate.signal.reason).toBe(readLate.endReason);
    expect(readLate.endReason?.kind).toBe('released');
    expect(readLate.signal).toBe(readLate.signal);
  });

  it('remembers the newest uncertain RVNs, up to eight, until a write is confirmed', () => {
    const lock = heldLock();
    expect(lock.uncertainRecordVersionNumbers).toBeUndefined();
    for (let i = 1; i <= 10; i++)
      lock.rememberUncertain({ recordVersionNumber: `rvn-u${i}`, sentAt: 1_000 + i, sentAtWall: undefined, leaseDurationMs: 100 });
    expect(lock.uncertainRecordVersionNumbers).toEqual(['rvn-u3', 'rvn-u4', 'rvn-u5', 'rvn-u6', 'rvn-u7', 'rvn-u8', 'rvn-u9', 'rvn-u10']);
    lock.confirmWrite({ recordVersionNumber: 'rvn-2', sentAt: 1_020, sentAtWall: undefined, leaseDurationMs: 100 });
    expect(lock.uncertainRecordVersionNumbers).toBeUndefined();
    expect(lock.recordVersionNumber).toBe('rvn-2');
  });

  it('is safe until the lease minus the margin of that lease after its last confirmed write', () => {
    const lock = heldLock({ lookupTime: 1_000, leaseDurationMs: 100 });
    expect(lock.safeUntil()).toBe(1_090);
    // A confirmed heartbeat that shortened the lease to 50 ms: the margin follows, 5 ms.
    lock.confirmWrite({ recordVersionNumber: 'rvn-2', sentAt: 1_020, sentAtWall: undefined, leaseDurationMs: 50 });
    expect(lock.safeUntil()).toBe(1_065);
  });

  it('a write of unknown outcome that shortened the lease shortens the safe time; one that did not changes nothing', () => {
    const lock = heldLock({ lookupTime: 1_000, leaseDurationMs: 100 });
    lock.rememberUncertain({ recordVersionNumber: 'rvn-u1', sentAt: 1_030, sentAtWall: undefined, leaseDurationMs: 100 });
    expect(lock.safeUntil()).toBe(1_090);
    lock.rememberUncertain({ recordVersionNumber: 'rvn-u2', sentAt: 1_040, sentAtWall: undefined, leaseDurationMs: 20 });
    expect(lock.safeUntil()).toBe(1_058);
    // Pushed out of the newest eight, its safe time still counts.
    for (let i = 3; i <= 12; i++)
      lock.rememberUncertain({ recordVersionNumber: `rvn-u${i}`, sentAt: 1_040 + i, sentAtWall: undefined, leaseDurationMs: 100 });
    expect(lock.uncertainRecordVersionNumbers).not.toContain('rvn-u2');
    expect(lock.safeUntil()).toBe(1_058);
    lock.confirmWrite({ recordVersionNumber: 'rvn-3', sentAt: 1_060, sentAtWall: undefined, leaseDurationMs: 100 });
    expect(lock.safeUntil()).toBe(1_150);
  });

  it('counts wall-clock time the monotonic clock missed (a suspended host) against its safe time, never for it', () => {
    const withWall = (): HeldLock =>
      new HeldLock({ ...heldLockFields({ lookupTime: 1_000, leaseDurationMs: 100 }), lookupWallTime: 50_000, clock });
    // Monotonic 10 ms later, wall clock 200 ms later: the host slept through the lease.
    const slept = withWall();
    [testClock.now, testClock.wall] = [1_010, 50_200];
    expect(slept.safeTimeLeft()).toBe(1_090 - 1_200 + 1); // less the wall clock's 1 ms resolution
    // The wall clock stepped back: the monotonic clock still counts.
    const stepped = withWall();
    [testClock.now, testClock.wall] = [1_010, 40_000];
    expect(stepped.safeTimeLeft()).toBe(80);
    // A clock without a wall clock (tests' fake clocks) counts monotonic time only.
    const monotonicOnly = heldLock({ lookupTime: 1_000, leaseDurationMs: 100 });
    testClock.now = 1_010;
    expect(monotonicOnly.safeTimeLeft()).toBe(80);
  });

  it("does not take the wall clock's whole milliseconds for time the monotonic clock missed", () => {
    // Date.now() counts whole milliseconds: between two reads 10.2 ms apart it may have moved 11.
    const lock = new HeldLock({ ...heldLockFields({ lookupTime: 1_000, leaseDurationMs: 100 }), lookupWallTime: 50_000, clock });
    [testClock.now, testClock.wall] = [1_010.2, 50_011];
    expect(lock.safeTimeLeft()).toBeCloseTo(1_090 - 1_010.2, 6);
  });

  it('locks without additional attributes share one frozen empty item; others keep their own', () => {
    const a = heldLock();
    const b = heldLock();
    expect(a.additionalAttributes).toBe(b.additionalAttributes);
    expect(Object.isFrozen(a.additionalAttributes)).toBe(true);
    const own = { team: { S: 'blue' } };
    const c = new HeldLock({ ...heldLockFields(), additionalAttributes: own });
    expect(c.additionalAttributes).toBe(own);
  });

  it('writing: from the moment a write is queued until the last one settles, failed ones included', async () => {
    const lock = heldLock();
    expect(lock.writing).toBe(false);
    let releaseFirst!: () => void;
    const first = lock.queueWrite(() => new Promise<void>((resolve) => (releaseFirst = resolve)));
    const second = lock.queueWrite(() => Promise.reject(new Error('refused')));
    expect(lock.writing).toBe(true); // queued, not yet started
    for (let i = 0; i < 10; i++) await Promise.resolve();
    releaseFirst();
    await first;
    expect(lock.writing).toBe(true); // the second is still to run
    await expect(second).rejects.toThrow('refused');
    expect(lock.writing).toBe(false);
  });
});
