/**
 * Handing a lock over when replies are lost or late (DESIGN.md, "The
 * outcome of a write"): the adopting write whose reply was lost is settled
 * by reading the item back or by the SDK's own retry, and held once; a
 * hand-off waits for a heartbeat under way, and its handle names a
 * heartbeat's RVN whose reply was lost, so that the adopter's condition
 * matches whatever the table holds.
 */
import { describe, expect, it } from '@jest/globals';
import { DynamoDBUnavailableError, type Lock, type LockClient } from '../../src/index.js';
import { useFaultBed } from '../../test-kit/jest/fault-bed.js';
import { dynamoDBErrorReply, FaultProxy, operationOf, type ProxiedRequest, type RequestFault } from '../../test-kit/fault-proxy.js';
import type { ProxiedDynamoDB } from '../../test-kit/proxied-dynamodb.js';
import { rejectionOf, waitUntil } from '../../test-kit/test-locks.js';

const LEASE = 2_000;
const HEARTBEAT = 500;
const FORWARD: RequestFault = { action: 'forward' };

const faults = useFaultBed('hand-over-lost');

const isUpdateItem = (request: ProxiedRequest): boolean => operationOf(request) === 'UpdateItem';
/** The adopting write: the one UpdateItem that writes an owner name. */
const isAdoption = (request: ProxiedRequest): boolean => isUpdateItem(request) && request.body.toString('utf8').includes(':newOn');

async function proxiedClient(
  ownerName: string,
  options: { sdkDefaults?: boolean; backgroundHeartbeats?: boolean } = {},
): Promise<{ client: LockClient; network: ProxiedDynamoDB }> {
  const network = await faults.proxied(ownerName, { sdkDefaults: options.sdkDefaults });
  const settings = { ownerName, leaseDuration: LEASE, heartbeatPeriod: HEARTBEAT, backgroundHeartbeats: options.backgroundHeartbeats };
  return { client: faults.bed.client(settings, network.dynamoDB), network };
}

const plainClient = (ownerName: string): LockClient => faults.bed.client({ ownerName, leaseDuration: LEASE, heartbeatPeriod: HEARTBEAT });

/** The adopter's heartbeats go on: the table holds its RVN once a heartbeat in flight, if any, has been answered. */
const untilTableHolds = (key: string, lock: Lock): Promise<void> =>
  waitUntil(`the table holds the RVN of ${key}'s adopter`, async () => (await faults.bed.rvn(key)) === lock.recordVersionNumber);

describe('an adopting write whose reply was lost', () => {
  it('is read back and found applied: the adopter holds the lock once, with the RVN it wrote', async () => {
    const handle = await (await plainClient('first').acquireLock('read-back')).handOff();
    const { client, network } = await proxiedClient('second');
    const dropped = network.proxy.dropNextReply(isAdoption);
    const adopted = await client.adoptLock(handle);
    expect((await dropped).swallowedStatusLine).toMatch(/^HTTP\/1\.1 200 /);
    expect(network.proxy.exchanges.filter((e) => isAdoption(e.request))).toHaveLength(1);
    expect(await faults.bed.owner('read-back')).toBe('second');
    await untilTableHolds('read-back', adopted);
    // Kept by its heartbeats, conditioned on the RVN read back: one is accepted.
    const readBack = adopted.recordVersionNumber;
    await waitUntil('a heartbeat of the adopter is accepted', () => adopted.recordVersionNumber !== readBack);
    expect(adopted.isHeld()).toBe(true);
    expect(await faults.bed.owner('read-back')).toBe('second');
  });

  it("in the client README tells users to build, is taken as applied when the SDK's retry meets the adopter's own item", async () => {
    const handle = await (await plainClient('first').acquireLock('retried')).handOff();
    const { client, network } = await proxiedClient('second', { sdkDefaults: true });
    const lost = network.proxy.loseReplyThenRetries(isAdoption, FORWARD);
    const adopted = await client.adoptLock(handle);
    const first = (await lost).request;
    const attempts = network.proxy.exchanges.filter(
      (e) => e.request.headers['amz-sdk-invocation-id'] === first.headers['amz-sdk-invocation-id'],
    );
    expect(attempts.map((e) => FaultProxy.attemptOf(e.request))).toEqual([1, 2]);
    expect(await faults.bed.owner('retried')).toBe('second');
    await untilTableHolds('retried', adopted);
    expect(adopted.isHeld()).toBe(true);
  });

  it('answered by a 5xx and not applied, is sent again with the same RVN and then held', async () => {
    const handle = await (await plainClient('first').acquireLock('five-hundred')).handOff();
    const { client, network } = await proxiedClient('second');
    void network.proxy.injectOnce(isAdoption, { action: 'respond', reply: dynamoDBErrorReply('InternalServerError') });
    const adopted = await client.adoptLock(handle);
    const sent = network.proxy.exchanges.filter((e) => isAdoption(e.request)).map((e) => e.request.body.toString('utf8'));
    expect(sent).toHaveLength(2);
    expect(sent[1]).toBe(sent[0]); // the same write: a late landing of the first would make the second count it applied
    await untilTableHolds('five-hundred', adopted);
  });

  it('that got no answer at all fails typed, holds nothing, and leaves the handle to be adopted again', async () => {
    const handle = await (await plainClient('first').acquireLock('no-answer')).handOff();
    const { client, network } = await proxiedClient('second');
    network.proxy.blackhole();
    const error = await rejectionOf(client.adoptLock(handle));
    expect(error).toBeInstanceOf(DynamoDBUnavailableError);
    expect(client.hasLock('no-answer')).toBe(false);
    expect(await faults.bed.owner('no-answer')).toBe('first');
    network.proxy.passThrough();
    const adopted = await client.adoptLock(handle);
    expect(adopted.isHeld()).toBe(true);
  });

  it('that another adopter overtook is refused as moved on', async () => {
    const handle = await (await plainClient('first').acquireLock('overtaken')).handOff();
    const { client, network } = await proxiedClient('slow');
    network.proxy.addLatency(300);
    const slow = rejectionOf(client.adoptLock(handle));
    const fast = await plainClient('fast').adoptLock(handle);
    expect(await slow).toMatchObject({ name: 'LockHandOffError', code: 'MOVED_ON', holder: { ownerName: 'fast' } });
    expect(fast.isHeld()).toBe(true);
  });
});

describe('a hand-off with a heartbeat under way', () => {
  it('waits for the heartbeat: the handle names the RVN it wrote, which the table holds', async () => {
    const { client, network } = await proxiedClient('first');
    const lock = await client.acquireLock('in-flight');
    let arrived!: () => void;
    const heartbeatSent = new Promise<void>((resolve) => (arrived = resolve));
    network.proxy.setRule((request) => {
      if (!isUpdateItem(request)) return FORWARD;
      arrived();
      return { action: 'forward', delayMs: 300 };
    });
    await heartbeatSent;
    const before = lock.recordVersionNumber;
    const handle = await lock.handOff();
    network.proxy.passThrough();
    expect(handle.recordVersionNumber).not.toBe(before);
    expect(await faults.bed.rvn('in-flight')).toBe(handle.recordVersionNumber);
    expect(handle.uncertainRecordVersionNumbers).toBeUndefined();
    await plainClient('second').adoptLock(handle);
    expect(await faults.bed.owner('in-flight')).toBe('second');
  });

  it('whose reply was lost names its RVN as in doubt: the adopter takes the lock the table holds', async () => {
    const { client, network } = await proxiedClient('first', { backgroundHeartbeats: false });
    const lock = await client.acquireLock('lost-heartbeat');
    const dropped = network.proxy.dropNextReply(isUpdateItem);
    await expect(lock.sendHeartbeat()).rejects.toThrow();
    await dropped;
    const handle = await lock.handOff();
    const stored = await faults.bed.rvn('lost-heartbeat');
    expect(stored).not.toBe(handle.recordVersionNumber); // the heartbeat was applied, unseen
    expect(handle.uncertainRecordVersionNumbers).toEqual([stored]);
    const adopted = await plainClient('second').adoptLock(handle);
    expect(await faults.bed.owner('lost-heartbeat')).toBe('second');
    expect(adopted.isHeld()).toBe(true);
  });
});
