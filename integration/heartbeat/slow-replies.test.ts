/**
 * A server that answers every heartbeat later than a heartbeat period, but
 * well within the lock's safe time, must not cost the lock: an attempt still
 * unanswered is waited for while the safe time allows an answer, rather than
 * cut off after a period and sent again into the same delay.
 */
import { describe, expect, it } from '@jest/globals';
import { useFaultBed } from '../../test-kit/jest/fault-bed.js';
import { recordEvents } from '../../test-kit/jest/lock-events.js';

const faults = useFaultBed('hb-slow-replies');

describe('heartbeats answered later than a period', () => {
  const LEASE_MS = 3_000;
  const PERIOD_MS = 750;
  // Longer than a period, and less than half of the 2.7 s of safe time (the default margin is a tenth of the lease).
  const REPLY_DELAY_MS = 900;
  const HOLD_MS = 4 * LEASE_MS;

  it('keep the lock: each is confirmed within the safe time, none is given up unanswered', async () => {
    const network = await faults.proxied('slow-replies', { sdkDefaults: true });
    const client = faults.bed.client({ ownerName: 'slow-replies', leaseDuration: LEASE_MS, heartbeatPeriod: PERIOD_MS }, network.dynamoDB);
    const events = recordEvents(client);
    const lock = await client.acquireLock('slow-replies');

    network.proxy.addLatency(REPLY_DELAY_MS);
    await new Promise((resolve) => setTimeout(resolve, HOLD_MS));

    expect(events.of('lost').map((seen) => seen.event.error.message)).toEqual([]);
    expect(lock.state).toBe('held');
    // At most one heartbeat per delayed round trip, and at least half as many: the lock was kept by answered heartbeats.
    expect(events.of('heartbeat', lock).length).toBeGreaterThanOrEqual(HOLD_MS / REPLY_DELAY_MS / 2);
    expect(await faults.bed.owner('slow-replies')).toBe('slow-replies');
  }, 30_000);
});
