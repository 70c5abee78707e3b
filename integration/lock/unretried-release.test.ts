/**
 * A release that DynamoDB refuses with nothing changed keeps the lock held,
 * so that a caller holding the `Lock` may release it again. Where nobody
 * can (the step-down that ends `lead`, the end of `withLock` or of an
 * `await using` scope, a release with `bestEffort`), the lock must lapse instead: heartbeats stop, and it is
 * free to be taken over one lease later. Before, it stayed held and
 * heartbeated for as long as the client lived, owned by no one, and the
 * candidate's next campaign threw `AlreadyCampaigningError`.
 */
import { describe, expect, it } from '@jest/globals';
import { setTimeout as sleep } from 'node:timers/promises';
import { LeaderElection } from '../../src/index.js';
import { useFaultBed } from '../../test-kit/jest/fault-bed.js';
import { within } from '../../test-kit/jest/lock-events.js';
import { operationOf, refuseDeletes } from '../../test-kit/fault-proxy.js';
import type { ProxiedDynamoDB } from '../../test-kit/proxied-dynamodb.js';

const LEASE_MS = 1_500;
const HEARTBEAT_MS = 300;

const faults = useFaultBed('unretried-release');

/** Every DeleteItem is refused (a role without `dynamodb:DeleteItem`). */
async function deniedDeletes(identity: string): Promise<ProxiedDynamoDB> {
  const network = await faults.proxied(identity, { sdkDefaults: true });
  network.proxy.setRule(refuseDeletes);
  return network;
}

/** Heartbeats (single or batched) among the requests through `network` after the first `since`. */
function heartbeatsSince(network: ProxiedDynamoDB, since: number): number {
  return network.proxy.exchanges
    .slice(since)
    .filter((exchange) => ['UpdateItem', 'BatchExecuteStatement'].includes(operationOf(exchange.request) ?? '')).length;
}

describe('a refused release that nobody can retry', () => {
  it('lead: the leadership lapses, and the next campaign waits it out and leads', async () => {
    const network = await deniedDeletes('leader');
    const client = faults.bed.client({ ownerName: 'leader', leaseDuration: LEASE_MS, heartbeatPeriod: HEARTBEAT_MS }, network.dynamoDB);
    const election = new LeaderElection(client, 'denied-resignation', { refreshPeriod: 100 });

    expect(await election.lead(() => 'first term')).toBe('first term');
    const steppedDown = network.proxy.exchanges.length;
    expect(client.hasLock('denied-resignation')).toBe(false);
    await sleep(3 * HEARTBEAT_MS);
    expect(heartbeatsSince(network, steppedDown)).toBe(0);

    // The item is still there with the old RVN: the next campaign takes it over once it stood still for a lease.
    expect(await within(Promise.resolve(election.lead(() => 'second term')), 5 * LEASE_MS, 'the second term')).toBe('second term');
  }, 30_000);

  it('withLock: the lock lapses once the routine is over', async () => {
    const network = await deniedDeletes('worker');
    const client = faults.bed.client({ ownerName: 'worker', leaseDuration: LEASE_MS, heartbeatPeriod: HEARTBEAT_MS }, network.dynamoDB);

    expect(await client.withLock('denied-release', () => 'done')).toBe('done');
    const ended = network.proxy.exchanges.length;
    expect(client.hasLock('denied-release')).toBe(false);
    await sleep(3 * HEARTBEAT_MS);
    expect(heartbeatsSince(network, ended)).toBe(0);
    const other = faults.bed.client({ ownerName: 'other' });
    await within(other.acquireLock('denied-release', { refreshPeriod: 100 }), 5 * LEASE_MS, 'the takeover');
    expect(await faults.bed.owner('denied-release')).toBe('other');
  }, 30_000);

  it('release({ bestEffort: true }) resolves to false and the lock lapses', async () => {
    const network = await deniedDeletes('best-effort');
    const client = faults.bed.client({ ownerName: 'best-effort', leaseDuration: LEASE_MS, heartbeatPeriod: HEARTBEAT_MS }, network.dynamoDB);
    const lock = await client.acquireLock('denied-best-effort');

    expect(await lock.release({ bestEffort: true })).toBe(false);
    const released = network.proxy.exchanges.length;
    expect(lock.isHeld()).toBe(false);
    expect(client.hasLock('denied-best-effort')).toBe(false);
    await sleep(3 * HEARTBEAT_MS);
    expect(heartbeatsSince(network, released)).toBe(0);
  }, 30_000);

  it('the end of an `await using` scope: the error is thrown, and the lock, or each of the group, lapses', async () => {
    const network = await deniedDeletes('scoped');
    const client = faults.bed.client({ ownerName: 'scoped', leaseDuration: LEASE_MS, heartbeatPeriod: HEARTBEAT_MS }, network.dynamoDB);
    const lock = await client.acquireLock('denied-scope');
    const group = await client.acquireLocks(['denied-group-a', 'denied-group-b']);

    await expect(lock[Symbol.asyncDispose]()).rejects.toMatchObject({ name: 'AccessDeniedException' });
    await expect(group[Symbol.asyncDispose]()).rejects.toMatchObject({ name: 'AccessDeniedException' });
    const disposed = network.proxy.exchanges.length;
    for (const key of ['denied-scope', 'denied-group-a', 'denied-group-b']) expect(client.hasLock(key)).toBe(false);
    await sleep(3 * HEARTBEAT_MS);
    expect(heartbeatsSince(network, disposed)).toBe(0);
  }, 30_000);
});
