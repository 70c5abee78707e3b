/**
 * The session monitor ("danger zone", PROTOCOL.md §6.5).
 */
import { describe, expect, it } from '@jest/globals';
import { InvalidArgumentError, SessionMonitorNotSetError } from '../../src/index.js';
import { now, rejectionOf, sleep, waitUntil } from '../../test-kit/test-locks.js';
import { useLockTestBed } from '../../test-kit/jest/lock-test-bed-hook.js';

const bed = useLockTestBed('lock-session-monitor');

describe('session monitor', () => {
  it('without heartbeats: fires once after safeTimeWithoutHeartbeat, amIAboutToExpire turns true; a heartbeat re-arms it', async () => {
    const safeTime = 800;
    // A lease the manual heartbeat below lands well within on a loaded machine; the monitor's safe time is what is tested.
    const client = bed.client({ ownerName: 'unheard', leaseDuration: 4_000, heartbeatPeriod: 250, backgroundHeartbeats: false });
    const fired: number[] = [];
    const started = now();
    const lock = await client.acquireLock('monitored', {
      sessionMonitor: { safeTimeWithoutHeartbeat: safeTime, callback: () => fired.push(now()) },
    });

    expect(lock.amIAboutToExpire()).toBe(false);
    expect(lock.millisecondsUntilDangerZoneEntered()).toBeGreaterThan(0);
    expect(lock.millisecondsUntilDangerZoneEntered()).toBeLessThanOrEqual(safeTime);
    // Halfway there, counted as the monitor counts: from when the write left, not from when its reply came.
    await sleep(lock.millisecondsUntilDangerZoneEntered() / 2);
    expect(fired).toHaveLength(0);

    await waitUntil('the session monitor fired', () => fired.length > 0, { timeoutMs: 5_000 });
    expect(fired[0]! - started).toBeGreaterThanOrEqual(safeTime);
    expect(lock.amIAboutToExpire()).toBe(true);
    expect(lock.millisecondsUntilDangerZoneEntered()).toBeLessThanOrEqual(0);
    expect(lock.state).toBe('held');
    await sleep(300);
    expect(fired).toHaveLength(1);

    // A confirmed heartbeat leaves the danger zone and arms the monitor again.
    const beatAt = now();
    await client.sendHeartbeat(lock);
    expect(lock.amIAboutToExpire()).toBe(false);
    expect(lock.millisecondsUntilDangerZoneEntered()).toBeGreaterThan(0);
    await waitUntil('the session monitor fired again', () => fired.length > 1, { timeoutMs: 5_000 });
    expect(fired[1]! - beatAt).toBeGreaterThanOrEqual(safeTime - 50);
    expect(fired).toHaveLength(2);
  }, 20_000);

  it('with background heartbeats: does not fire within several leases', async () => {
    // A danger zone 1.55 s past a 250 ms heartbeat period: room for a busy CI machine's event loop, which
    // may run a heartbeat hundreds of milliseconds late; the monitor is about heartbeats that stop.
    const client = bed.client({ ownerName: 'beating', leaseDuration: 2_000, heartbeatPeriod: 250 });
    let calls = 0;
    const lock = await client.acquireLock('safe', {
      sessionMonitor: { safeTimeWithoutHeartbeat: 1_800, callback: () => calls++ },
    });
    const firstRvn = lock.recordVersionNumber;
    for (let i = 0; i < 10; i++) {
      await sleep(500);
      expect(lock.amIAboutToExpire()).toBe(false);
    }
    expect(calls).toBe(0);
    expect(lock.recordVersionNumber).not.toBe(firstRvn);
    expect(lock.state).toBe('held');
  }, 20_000);

  it('does not fire for a lock released before its safe time', async () => {
    const client = bed.client({ ownerName: 'releaser', leaseDuration: 2_000, heartbeatPeriod: 250, backgroundHeartbeats: false });
    let calls = 0;
    const lock = await client.acquireLock('released-early', {
      sessionMonitor: { safeTimeWithoutHeartbeat: 500, callback: () => calls++ },
    });
    expect(await lock.release()).toBe(true);
    await sleep(900);
    expect(calls).toBe(0);
  }, 20_000);

  it('SessionMonitorNotSetError on a lock acquired without one; invalid safe times are refused before any write', async () => {
    const client = bed.client({ ownerName: 'plain', leaseDuration: 1_000, heartbeatPeriod: 250 });
    const lock = await client.acquireLock('unmonitored');
    expect(() => lock.millisecondsUntilDangerZoneEntered()).toThrow(SessionMonitorNotSetError);
    expect(() => lock.amIAboutToExpire()).toThrow(SessionMonitorNotSetError);

    for (const safeTimeWithoutHeartbeat of [250, 1_000, 100, 5_000]) {
      const error = await rejectionOf(client.acquireLock(`bad-${safeTimeWithoutHeartbeat}`, { sessionMonitor: { safeTimeWithoutHeartbeat } }));
      expect(error).toBeInstanceOf(InvalidArgumentError);
      expect((error as InvalidArgumentError).code).toBe('INVALID_SESSION_MONITOR');
      expect(await bed.item(`bad-${safeTimeWithoutHeartbeat}`)).toBeUndefined();
    }
  }, 20_000);
});
