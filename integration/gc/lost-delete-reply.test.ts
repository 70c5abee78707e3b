/**
 * A delete of `collectAbandoned` whose reply is lost may have been applied.
 * Through the SDK's retries (the client README tells users to build), a
 * retry that finds the item gone counts it deleted; one that finds another
 * holder's item leaves it (taken); without a retry, the unknown outcome is
 * reported as an error, never hidden.
 */
import { describe, expect, it } from '@jest/globals';
import { FaultProxy, operationOf } from '../../test-kit/fault-proxy.js';
import { useFaultBed } from '../../test-kit/jest/fault-bed.js';
import { putForeignLock } from '../../test-kit/tamper.js';
import { waitUntil } from '../../test-kit/test-locks.js';

const LEASE_MS = 1_000;
/** The collector's own lease bounds each of its requests: long enough for a retry held back by the proxy. */
const COLLECTOR_LEASE_MS = 10_000;

const faults = useFaultBed('gc-lost-reply');
const isDelete = (request: Parameters<typeof operationOf>[0]): boolean => operationOf(request) === 'DeleteItem';

describe('collectAbandoned, when the reply to its delete is lost', () => {
  it('with SDK retries: the retry finds the item gone, and it counts as deleted', async () => {
    await putForeignLock(faults.bed, 'abandoned', 'java-host', { leaseMs: LEASE_MS });
    const network = await faults.proxied('collector', { sdkDefaults: true });
    const lost = network.proxy.loseReplyThenRetries(isDelete, { action: 'forward' });
    const client = faults.bed.client({ ownerName: 'collector', leaseDuration: COLLECTOR_LEASE_MS }, network.dynamoDB);

    const report = await client.collectAbandoned();
    await lost;
    const deletes = network.proxy.exchanges.filter((exchange) => isDelete(exchange.request));
    expect(deletes.map((exchange) => FaultProxy.attemptOf(exchange.request))).toEqual([1, 2]);
    expect(report.deleted.map((lock) => lock.partitionKey)).toEqual(['abandoned']);
    expect(report.left).toEqual([]);
    expect(await faults.bed.item('abandoned')).toBeUndefined();
  });

  it('with SDK retries: the retry finds a new holder’s item, which is left as taken', async () => {
    await putForeignLock(faults.bed, 'retaken', 'java-host', { leaseMs: LEASE_MS });
    const network = await faults.proxied('collector', { sdkDefaults: true });
    const lost = network.proxy.loseReplyThenRetries(isDelete, { action: 'forward', delayMs: 1_000 });
    const client = faults.bed.client({ ownerName: 'collector', leaseDuration: COLLECTOR_LEASE_MS }, network.dynamoDB);

    const pass = client.collectAbandoned();
    await lost;
    // The first attempt deleted it; a new holder takes the free lock before the retry lands.
    const newRvn = await putForeignLock(faults.bed, 'retaken', 'new-holder', { leaseMs: LEASE_MS });
    const report = await pass;
    await waitUntil('the retry was sent', () => network.proxy.exchanges.filter((exchange) => isDelete(exchange.request)).length === 2);
    expect(report.deleted).toEqual([]);
    expect(report.left).toEqual([{ reason: 'taken', lock: expect.objectContaining({ partitionKey: 'retaken', ownerName: 'java-host' }) }]);
    expect(await faults.bed.rvn('retaken')).toBe(newRvn);
  });

  it('without retries: the unknown outcome is reported as an error, though the item is gone', async () => {
    await putForeignLock(faults.bed, 'unknown', 'java-host', { leaseMs: LEASE_MS });
    const network = await faults.proxied('collector');
    const lost = network.proxy.dropNextReply(isDelete);
    const client = faults.bed.client({ ownerName: 'collector', leaseDuration: COLLECTOR_LEASE_MS }, network.dynamoDB);

    const report = await client.collectAbandoned();
    await lost;
    expect(report.deleted).toEqual([]);
    expect(report.left).toEqual([{ reason: 'error', lock: expect.objectContaining({ partitionKey: 'unknown' }), error: expect.anything() }]);
    expect(await faults.bed.item('unknown')).toBeUndefined();
  });
});
