/** `dynamodb-lock gc`, the real CLI against DynamoDB Local. */
import { describe, expect, it } from '@jest/globals';
import { localEndpoint } from '../../test-kit/aws.js';
import { runCli } from '../../test-kit/cli-process.js';
import { useLockTestBed } from '../../test-kit/jest/lock-test-bed-hook.js';
import { putForeignLock } from '../../test-kit/tamper.js';

// gc watches each item for its lease: the live holder must heartbeat within it even on a loaded CI
// machine, where a jest worker can stall for over a second while CLI processes start beside it.
const LEASE_MS = 3_000;
const bed = useLockTestBed('cli-gc');

const gc = (...flags: string[]) => runCli(['gc', '--endpoint', localEndpoint(), '--table', bed.tableName, ...flags]);

describe('dynamodb-lock gc', () => {
  it('--json: deletes the abandoned item, leaves the one a live holder heartbeats, and exits with 0', async () => {
    await putForeignLock(bed, 'abandoned', 'java-host', { leaseMs: LEASE_MS });
    const holder = bed.client({ ownerName: 'alive', leaseDuration: LEASE_MS, heartbeatPeriod: 200 });
    const lock = await holder.acquireLock('held');

    const result = await gc('--json');
    expect(result.stderr).toBe('');
    expect(result.code).toBe(0);
    const report = JSON.parse(result.stdout) as { deleted: { partitionKey: string }[]; left: { partitionKey: string; reason: string }[] };
    expect(report).toMatchObject({ dryRun: false, complete: true });
    expect(report.deleted).toEqual([
      {
        partitionKey: 'abandoned',
        sortKey: null,
        ownerName: 'java-host',
        leaseDuration: LEASE_MS,
        recordVersionNumber: expect.any(String),
        isReleased: false,
      },
    ]);
    expect(report.left).toEqual([expect.objectContaining({ partitionKey: 'held', ownerName: 'alive', reason: 'moved' })]);
    expect(await bed.item('abandoned')).toBeUndefined();
    expect(lock.isHeld()).toBe(true);
  });

  it('--dry-run, in text: says what it would delete and deletes nothing', async () => {
    const rvn = await putForeignLock(bed, 'abandoned', 'java-host', { leaseMs: LEASE_MS });
    await putForeignLock(bed, 'hour-long', 'java-host', { leaseMs: 3_600_000 });

    const result = await gc('--dry-run', '--max-lease', '1m');
    expect(result.code).toBe(0);
    expect(result.stdout).toMatch(/^Pass of .*: deleted nothing \(--dry-run\), left 2\.\n/);
    expect(result.stdout).toMatch(new RegExp(`abandoned +java-host +3 s +${rvn} +would be deleted \\(--dry-run\\)`));
    expect(result.stdout).toMatch(/hour-long +java-host +.* +lease over --max-lease/);
    expect(await bed.rvn('abandoned')).toBe(rvn);
  });
});
