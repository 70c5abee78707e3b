/**
 * What `console.log` shows of the handles users hold: the lock's identity and
 * state, not an empty `Lock {}` (their fields are private).
 */
import { describe, expect, it } from '@jest/globals';
import { inspect } from 'node:util';
import { LeaderElection } from '../src/index.js';
import { useLockTestBed } from '../test-kit/jest/lock-test-bed-hook.js';

const bed = useLockTestBed('inspect');

describe('util.inspect (console.log)', () => {
  it('shows a Lock’s key, owner, RVN, lease and state, and follows its state', async () => {
    const client = bed.client({ ownerName: 'inspector', leaseDuration: 2_000, heartbeatPeriod: 500 });
    const lock = await client.acquireLock('shown', { sortKey: undefined });
    const held = inspect(lock);
    expect(held).toMatch(/^Lock \{/);
    expect(held).toContain("partitionKey: 'shown'");
    expect(held).toContain("ownerName: 'inspector'");
    expect(held).toContain(`recordVersionNumber: '${lock.recordVersionNumber}'`);
    expect(held).toContain('leaseDuration: 2000');
    expect(held).toContain("state: 'held'");
    await lock.release();
    expect(inspect(lock)).toContain("state: 'released'");
    // Nested inside something else, it stays one readable entry.
    expect(inspect({ lock }, { depth: 0 })).toBe('{ lock: [Lock] }');
  }, 20_000);

  it('shows a Leadership as the lock it stands for', async () => {
    const client = bed.client({ ownerName: 'leader', leaseDuration: 2_000, heartbeatPeriod: 500 });
    const leadership = await new LeaderElection(client, 'shown-election').campaign();
    const shown = inspect(leadership);
    expect(shown).toMatch(/^Leadership \{/);
    expect(shown).toContain("partitionKey: 'shown-election'");
    expect(shown).toContain("ownerName: 'leader'");
    expect(shown).toContain('isLeader: true');
    await leadership.resign();
    expect(inspect(leadership)).toContain('isLeader: false');
  }, 20_000);
});
