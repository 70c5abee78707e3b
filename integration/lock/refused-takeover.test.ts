/**
 * A takeover refused because the watched item is gone: the item was deleted
 * just before the waiter's takeover instant (as `release --force` does after
 * its stand-still). The refusal's missing ALL_OLD item is an observation of
 * "no item", so the waiter goes on to the new-lock write at once, instead of
 * sending the refused takeover again until its next poll.
 */
import { describe, expect, it } from '@jest/globals';
import { LeaderElection } from '../../src/index.js';
import { useFaultBed } from '../../test-kit/jest/fault-bed.js';
import { within } from '../../test-kit/jest/lock-events.js';
import { operationOf, type FaultProxy, type ProxiedRequest } from '../../test-kit/fault-proxy.js';
import { deleteLockItem, putForeignLock } from '../../test-kit/tamper.js';

const GHOST_LEASE_MS = 1_000;

const faults = useFaultBed('refused-takeover');

const isPutItem = (request: ProxiedRequest): boolean => operationOf(request) === 'PutItem';
const isGetItem = (request: ProxiedRequest): boolean => operationOf(request) === 'GetItem';
const putItemsThrough = (proxy: FaultProxy): number => proxy.exchanges.filter((e) => isPutItem(e.request)).length;

/**
 * Deletes `key`'s item while the first takeover (a PutItem conditioned on
 * `ghostRvn`) is on its way: the deletion is sent first, and the takeover
 * forwarded once it surely landed.
 */
function deleteBeforeTakeover(proxy: FaultProxy, key: string, ghostRvn: string, also: (request: ProxiedRequest) => boolean = () => false) {
  let deleted = false;
  proxy.setRule((request) => {
    if (also(request)) return { action: 'blackhole' };
    if (deleted || !isPutItem(request) || !request.body.toString('utf8').includes(ghostRvn)) return { action: 'forward' };
    deleted = true;
    void deleteLockItem(faults.bed, key);
    return { action: 'forward', delayMs: 300 };
  });
}

describe('a takeover refused because the item was deleted just before it', () => {
  it('goes on to the new-lock write: a handful of PutItems, and the free lock is taken', async () => {
    const ghostRvn = await putForeignLock(faults.bed, 'deleted-before', 'ghost', { leaseMs: GHOST_LEASE_MS });
    const network = await faults.proxied('waiter', { sdkDefaults: true });
    const waiter = faults.bed.client({ ownerName: 'waiter' }, network.dynamoDB);
    deleteBeforeTakeover(network.proxy, 'deleted-before', ghostRvn);

    // A long refresh period: the next poll is far past the takeover instant.
    const lock = await waiter.acquireLock('deleted-before', { refreshPeriod: 3_000, additionalTimeToWaitForLock: 10_000 });

    expect(lock.ownerName).toBe('waiter');
    expect(await faults.bed.owner('deleted-before')).toBe('waiter');
    // The takeover, then the new-lock write.
    expect(putItemsThrough(network.proxy)).toBeLessThanOrEqual(3);
  }, 30_000);

  it('takes the free lock even while the polls hang: a campaigning candidate does not spin on PutItems', async () => {
    const ghostRvn = await putForeignLock(faults.bed, 'hung-poll', 'ghost', { leaseMs: GHOST_LEASE_MS });
    const network = await faults.proxied('candidate', { sdkDefaults: true });
    const candidate = faults.bed.client({ ownerName: 'candidate' }, network.dynamoDB);
    // The first read answers; every later read hangs on a connection that never answers.
    let reads = 0;
    deleteBeforeTakeover(network.proxy, 'hung-poll', ghostRvn, (request) => isGetItem(request) && ++reads > 1);

    const campaign = new LeaderElection(candidate, 'hung-poll', { refreshPeriod: 200 }).campaign();
    const leadership = await within(campaign, 6_000, 'the campaign').finally(() => {
      // On failure, say how many PutItems the candidate sent meanwhile.
      expect(putItemsThrough(network.proxy)).toBeLessThanOrEqual(3);
    });

    expect(leadership.signal.aborted).toBe(false);
    expect(await faults.bed.owner('hung-poll')).toBe('candidate');
    expect(putItemsThrough(network.proxy)).toBeLessThanOrEqual(3);
  }, 30_000);
});
