/**
 * The client README tells users to build (`new DynamoDBClient({})`: the
 * SDK's standard retries, 4 attempts for DynamoDB) under lost replies. The SDK then sends
 * the same request again, and only the last attempt's answer reaches the
 * lock client: a refusal may follow an attempt that was applied. Every path
 * must read that as "may have been applied", or as applied when the old
 * item shows the very RVN it sent.
 */
import { describe, expect, it } from '@jest/globals';
import type { Lock, LockClient } from '../src/index.js';
import { LockLostError } from '../src/index.js';
import { useFaultBed } from '../test-kit/jest/fault-bed.js';
import { FaultProxy, dynamoDBErrorReply, operationOf, type ProxiedRequest, type RequestFault } from '../test-kit/fault-proxy.js';
import { abortOf, recordEvents, thrownBy, within, type EventLog } from '../test-kit/jest/lock-events.js';
import type { ProxiedDynamoDB } from '../test-kit/proxied-dynamodb.js';
import { deleteLockItem } from '../test-kit/tamper.js';
import { rejectionOf, waitUntil } from '../test-kit/test-locks.js';

const LEASE_MS = 3_000;
const HEARTBEAT_MS = 600;
/**
 * For heartbeats retried by the SDK: each heartbeat may take at most a period,
 * so a longer one leaves room for the SDK's backoff and its retry on a busy machine.
 */
const RETRIED_LEASE_MS = 4_000;
const RETRIED_HEARTBEAT_MS = 1_000;
/**
 * For a release whose retries are throttled: the SDK's backoffs took up to 5 s
 * here, and a release unanswered for the lock's lease is abandoned.
 */
const THROTTLED_RELEASE_LEASE_MS = 10_000;

const faults = useFaultBed('sdk-retries');

const operation =
  (name: string) =>
  (request: ProxiedRequest): boolean =>
    operationOf(request) === name;
const FORWARD: RequestFault = { action: 'forward' };
const THROTTLE: RequestFault = { action: 'respond', reply: dynamoDBErrorReply('ThrottlingException') };

/** A lock client on a README-built DynamoDB client behind a fault proxy. */
async function readmeClient(
  ownerName: string,
  settings: { leaseDuration?: number; heartbeatPeriod?: number; backgroundHeartbeats?: boolean; heartbeatConcurrency?: number } = {},
  retries?: SdkRetries,
): Promise<{ client: LockClient; network: ProxiedDynamoDB; events: EventLog }> {
  const network = await faults.proxied(ownerName, { sdkDefaults: true, retries });
  const client = faults.bed.client({ ownerName, leaseDuration: LEASE_MS, heartbeatPeriod: HEARTBEAT_MS, ...settings }, network.dynamoDB);
  return { client, network, events: recordEvents(client) };
}

/** The lock's heartbeats go on: the table holds its RVN once a heartbeat in flight, if any, has been answered. */
const untilTableHolds = (key: string, lock: Lock): Promise<void> =>
  waitUntil(`the table holds the RVN of ${key}`, async () => (await faults.bed.rvn(key)) === lock.recordVersionNumber);

/** The SDK's attempts of the call whose first reply was lost, as the proxy saw them. */
function attemptsAfter(network: ProxiedDynamoDB, first: ProxiedRequest): number[] {
  const invocation = first.headers['amz-sdk-invocation-id'];
  return network.proxy.exchanges
    .filter((e) => e.request.headers['amz-sdk-invocation-id'] === invocation)
    .map((e) => FaultProxy.attemptOf(e.request));
}

/**
 * Until each of `locks` has had two more confirmed heartbeats, or one is no
 * longer held: a heartbeat misread as refused ends its lock at once, and one
 * misread as unconfirmed leaves the lock's deadlines unmoved, so the
 * heartbeats that follow are what keeps it.
 */
async function twoMoreHeartbeats(events: EventLog, locks: readonly Lock[]): Promise<void> {
  const before = locks.map((lock) => events.of('heartbeat', lock).length);
  await waitUntil(
    'two more confirmed heartbeats of each lock',
    () => locks.some((lock) => lock.state !== 'held') || locks.every((lock, i) => events.of('heartbeat', lock).length >= (before[i] ?? 0) + 2),
    { timeoutMs: 20_000 },
  );
}

/** The SDK's own defaults, and the other retry settings README says work as they are. */
type SdkRetries = { maxAttempts?: number; retryMode?: 'standard' | 'adaptive' } | undefined;
const RETRY_SETTINGS: [string, SdkRetries][] = [
  ['the SDK defaults', undefined],
  ['adaptive retries', { retryMode: 'adaptive' }],
];

describe.each(RETRY_SETTINGS)('a release applied by its first attempt, whose retries are throttled (%s)', (_, retries) => {
  it('ends the lock: no second holder can pass throwIfLost beside it', async () => {
    const settings = { leaseDuration: THROTTLED_RELEASE_LEASE_MS, heartbeatPeriod: RETRIED_HEARTBEAT_MS };
    const { client, network } = await readmeClient('releaser', settings, retries);
    const lock = await client.acquireLock('job');
    const lost = network.proxy.loseReplyThenRetries(operation('DeleteItem'), THROTTLE);

    const released = await rejectionOf(lock.release());
    const dropped = await lost;

    // The fault happened as described: the delete was applied, the SDK retried and was throttled.
    expect(dropped.swallowedStatusLine).toMatch(/^HTTP\/1\.1 200 /);
    // Every attempt the SDK's defaults allow (3 or 4, by SDK version): the first applied, the rest throttled.
    const attempts = attemptsAfter(network, dropped.request);
    expect(attempts.length).toBeGreaterThanOrEqual(3);
    expect(attempts).toEqual(attempts.map((_, i) => i + 1));
    expect((released as Error).name).toBe('ThrottlingException');
    expect(await faults.bed.item('job')).toBeUndefined();

    // The releasing client must not think it still holds the lock.
    expect(lock.state).not.toBe('held');
    expect(lock.signal.aborted).toBe(true);
    expect(thrownBy(() => lock.throwIfLost())).toBeInstanceOf(LockLostError);

    // Another client takes the free lock at once.
    const other = faults.bed.client({ ownerName: 'other', leaseDuration: LEASE_MS, heartbeatPeriod: HEARTBEAT_MS });
    const theirs = await other.acquireLock('job', { additionalTimeToWaitForLock: 0 });
    theirs.throwIfLost();
    expect(thrownBy(() => lock.throwIfLost())).toBeInstanceOf(LockLostError);
  }, 30_000);
});

describe.each(RETRY_SETTINGS)('a release applied by its first attempt, whose retry finds the item gone (%s)', (_, retries) => {
  it('resolves true: the lock is released, whoever deleted the item, and no one has taken it since', async () => {
    const { client, network, events } = await readmeClient('releaser', {}, retries);
    const lock = await client.acquireLock('job');
    const lost = network.proxy.loseReplyThenRetries(operation('DeleteItem'), FORWARD);

    const released = await lock.release();
    const dropped = await lost;

    // The fault happened as described: the delete was applied, and the SDK's retry found no item.
    expect(dropped.swallowedStatusLine).toMatch(/^HTTP\/1\.1 200 /);
    expect(attemptsAfter(network, dropped.request).length).toBeGreaterThanOrEqual(2);
    expect(await faults.bed.item('job')).toBeUndefined();
    expect(released).toBe(true);
    expect(lock.state).toBe('released');
    expect(events.of('lost')).toEqual([]);
  }, 30_000);
});

describe.each<[string, SdkRetries]>([...RETRY_SETTINGS, ['maxAttempts 10', { maxAttempts: 10 }]])(
  'a heartbeat applied by its first attempt, retried by the SDK (%s)',
  (_, retries) => {
    it('UpdateItem: the retry refused by its own write confirms the heartbeat; the lock is kept', async () => {
      const { client, network, events } = await readmeClient(
        'beater',
        { leaseDuration: RETRIED_LEASE_MS, heartbeatPeriod: RETRIED_HEARTBEAT_MS },
        retries,
      );
      const lock = await client.acquireLock('job');

      const dropped = await within(
        network.proxy.loseReplyThenRetries(operation('UpdateItem'), FORWARD),
        10_000,
        'a heartbeat whose reply is lost',
      );
      const appliedRvn = (JSON.parse(dropped.request.body.toString('utf8')) as { ExpressionAttributeValues: Record<string, { S?: string }> })
        .ExpressionAttributeValues[':newRvn']?.S;
      await waitUntil('the SDK retried the heartbeat', () => attemptsAfter(network, dropped.request).includes(2));
      await twoMoreHeartbeats(events, [lock]);

      expect(events.of('lost').map((seen) => seen.event.error.message)).toEqual([]);
      expect(lock.state).toBe('held');
      expect(lock.signal.aborted).toBe(false);
      expect(appliedRvn).toBeDefined();
      await waitUntil('the table RVN equals lock.recordVersionNumber', async () => (await faults.bed.rvn('job')) === lock.recordVersionNumber);
    }, 45_000);

    it('BatchExecuteStatement: every lock of the batch is kept', async () => {
      // One heartbeat in flight at a time: heartbeats fall due while another is out, so batches form without a heavy load.
      const { client, network, events } = await readmeClient(
        'batcher',
        { leaseDuration: RETRIED_LEASE_MS, heartbeatPeriod: RETRIED_HEARTBEAT_MS, heartbeatConcurrency: 1 },
        retries,
      );
      const keys = Array.from({ length: 12 }, (_, i) => `batch-${i}`);
      const locks = await Promise.all(keys.map((key) => client.acquireLock(key)));
      // The first heartbeat is slow: the others fall due while it is out, and then go in one batch.
      void network.proxy.injectOnce((r) => ['UpdateItem', 'BatchExecuteStatement'].includes(operationOf(r) ?? ''), {
        action: 'forward',
        delayMs: 600,
      });

      const dropped = await within(
        network.proxy.loseReplyThenRetries(
          (r) => operationOf(r) === 'BatchExecuteStatement' && (r.body.toString().match(/"Statement"/g)?.length ?? 0) > 1,
          FORWARD,
        ),
        20_000,
        'a batch of heartbeats whose reply is lost',
      );
      await waitUntil('the SDK retried the batch', () => attemptsAfter(network, dropped.request).includes(2));
      await twoMoreHeartbeats(events, locks);

      expect(events.of('lost').map((seen) => seen.event.error.message)).toEqual([]);
      expect(locks.filter((lock: Lock) => lock.state !== 'held').map((lock) => lock.partitionKey)).toEqual([]);
    }, 60_000);
  },
);

describe('an acquisition applied by its first attempt, retried by the SDK', () => {
  it('a free lock is acquired at once: the refusal that shows our own new item is our win', async () => {
    const { client, network } = await readmeClient('acquirer');
    const lost = network.proxy.loseReplyThenRetries(operation('PutItem'), FORWARD);

    // Without waiting out a lease: the deadline is shorter than one.
    const lock = await client.acquireLock('job', { additionalTimeToWaitForLock: 0, refreshPeriod: 100, leaseDuration: 60_000 });
    const dropped = await lost;

    expect(attemptsAfter(network, dropped.request)).toEqual([1, 2]); // applied, then refused by itself
    expect(lock.state).toBe('held');
    await untilTableHolds('job', lock);
    await lock.release();
    expect(await faults.bed.item('job')).toBeUndefined();
  }, 30_000);

  it("free locks taken together: each INSERT the retried batch finds in place is its own acquisition's win", async () => {
    const { client, network } = await readmeClient('bulk');
    const keys = Array.from({ length: 5 }, (_, i) => `bulk-${i}`);
    const lost = network.proxy.loseReplyThenRetries(operation('BatchExecuteStatement'), FORWARD);

    // Without waiting out a lease: the deadline is shorter than one.
    const locks = await Promise.all(
      keys.map((key) => client.acquireLock(key, { additionalTimeToWaitForLock: 0, refreshPeriod: 100, leaseDuration: 60_000 })),
    );
    const dropped = await lost;

    expect(attemptsAfter(network, dropped.request)).toEqual([1, 2]); // applied, then refused as duplicates of themselves
    expect(locks.map((lock) => lock.state)).toEqual(keys.map(() => 'held'));
    for (const lock of locks) await untilTableHolds(lock.partitionKey, lock);
  }, 30_000);

  it('shouldSkipBlockingWait: the lock is ours, not "held by" ourselves', async () => {
    const { client, network } = await readmeClient('skipper');
    const lost = network.proxy.loseReplyThenRetries(operation('PutItem'), FORWARD);

    const lock = await client.acquireLock('job', { shouldSkipBlockingWait: true });
    await lost;

    expect(lock.state).toBe('held');
    expect(await faults.bed.owner('job')).toBe('skipper');
    await untilTableHolds('job', lock);
  }, 30_000);
});

describe('a heartbeat whose reply was lost, and whose SDK retry finds the lock item gone', () => {
  it('ends the lock as deleted on that answer: the item is free to anyone, so it is not a heartbeat in doubt', async () => {
    const { client, network, events } = await readmeClient('beater', { leaseDuration: RETRIED_LEASE_MS, heartbeatPeriod: RETRIED_HEARTBEAT_MS });
    const lock = await client.acquireLock('job');
    // The retry waits at the proxy long enough for the item to be deleted behind the holder's back.
    const dropped = await within(
      network.proxy.loseReplyThenRetries(operation('UpdateItem'), { action: 'forward', delayMs: 500 }),
      10_000,
      'a heartbeat whose reply is lost',
    );
    await deleteLockItem(faults.bed, 'job');

    await within(abortOf(lock.signal, 10_000), 10_000, 'the lock ends');
    // The fault happened as described: the SDK retried the heartbeat, and the item was gone.
    expect(attemptsAfter(network, dropped.request)).toContain(2);
    expect(await faults.bed.item('job')).toBeUndefined();
    expect(events.of('lost').map((seen) => seen.event.error.kind)).toEqual(['deleted']);
    // Ended by that heartbeat's own answer: not taken for a write in doubt, retried later while anyone could take the lock.
    expect(events.of('heartbeatError')).toEqual([]);
    const heartbeats = new Set(
      network.proxy.exchanges.filter((e) => operationOf(e.request) === 'UpdateItem').map((e) => e.request.headers['amz-sdk-invocation-id']),
    );
    expect(heartbeats.size).toBe(1);
  }, 30_000);
});
