/**
 * One `signal` bounding a burst of acquisitions, as README recommends: the
 * calls follow it without a listener each on it, so Node never warns of a
 * possible listener leak, and aborting it still ends every wait. Node's
 * warnings reach the real process only, so the burst runs in a child process
 * (test-kit/programs/shared-signal-burst.ts) that reports them.
 */
import { describe, expect, it } from '@jest/globals';
import { fileURLToPath } from 'node:url';
import { useLockTestBed } from '../../test-kit/jest/lock-test-bed-hook.js';
import { putForeignLock } from '../../test-kit/tamper.js';

const bed = useLockTestBed('shared-signal');
const BURST = 40;
const PROGRAM = fileURLToPath(new URL('../../test-kit/programs/shared-signal-burst.ts', import.meta.url));

describe('one signal shared by a burst of acquisitions', () => {
  it('takes every free lock, ends every wait when it aborts, and Node prints no MaxListenersExceededWarning', async () => {
    for (let i = 0; i < BURST; i++) await putForeignLock(bed, `held-${i}`, 'elsewhere');

    const burst = bed.spawnReporter(PROGRAM, [bed.tableName, String(BURST), 'held-']);
    const done = await burst.next('done', 0, 60_000);

    expect(done['acquired']).toBe(BURST);
    expect(done['abortedWaits']).toBe(BURST);
    expect((done['warnings'] as string[]).filter((warning) => !warning.includes('NodeVersionSupportWarning'))).toEqual([]);
  });
});
