/**
 * A user's logger that throws must not change what the client does: the
 * background heartbeat keeps running, a loss is still told (`lost`, the
 * signal), and nothing escapes as an unhandled rejection, which would end
 * the process under Node's defaults.
 */
import { afterEach, beforeEach, describe, expect, it } from '@jest/globals';
import { LockLostError, type Logger } from '../src/index.js';
import { useLockTestBed } from '../test-kit/jest/lock-test-bed-hook.js';
import { abortOf, recordEvents } from '../test-kit/jest/lock-events.js';
import { deleteLockItem } from '../test-kit/tamper.js';
import { sleep } from '../test-kit/test-locks.js';

const bed = useLockTestBed('throwing-logger');

const throwing = (): never => {
  throw new Error('the logger is broken');
};
const brokenLogger: Logger = { debug: throwing, warn: throwing, error: throwing };

let unhandled: unknown[] = [];
const onUnhandled = (reason: unknown): void => {
  unhandled.push(reason);
};
beforeEach(() => {
  unhandled = [];
  process.on('unhandledRejection', onUnhandled);
});
afterEach(() => {
  process.off('unhandledRejection', onUnhandled);
});

describe('a logger that throws', () => {
  it('changes nothing: a refused heartbeat still ends the lock, `lost` is told, and no rejection goes unhandled', async () => {
    // A lease far longer than the period: the refused heartbeat, not expiry, ends the lock on a loaded machine too.
    const client = bed.client({ ownerName: 'holder', leaseDuration: 4_000, heartbeatPeriod: 400, logger: brokenLogger });
    const events = recordEvents(client);
    const lock = await client.acquireLock('job');
    await deleteLockItem(bed, 'job');
    const aborted = await abortOf(lock.signal, 4_000);
    await sleep(800); // later heartbeat runs and their logging
    expect(aborted.reason).toBeInstanceOf(LockLostError);
    expect(events.of('lost').map((seen) => seen.event.error.kind)).toEqual(['deleted']);
    expect(unhandled).toEqual([]);
  }, 30_000);
});
