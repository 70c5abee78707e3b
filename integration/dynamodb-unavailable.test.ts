/**
 * A DynamoDB that gives no usable answer is not a lock someone else holds:
 * acquiring then rejects with DynamoDBUnavailableError (still a
 * LockNotGrantedError, as Java's), carrying the SDK's error, and
 * tryAcquireLock rejects too instead of resolving to `undefined`. Clients
 * here are built as README builds them: the SDK's own retries on.
 */
import { describe, expect, it } from '@jest/globals';
import {
  DynamoDBLockError,
  DynamoDBTimeoutError,
  DynamoDBUnavailableError,
  LockNotGrantedError,
  isDynamoDBLockError,
  isDynamoDBTimeoutError,
  isDynamoDBUnavailableError,
  isLockNotGrantedError,
  LeaderElection,
} from '../src/index.js';
import { useFaultBed } from '../test-kit/jest/fault-bed.js';
import { dynamoDBErrorReply } from '../test-kit/fault-proxy.js';
import { within } from '../test-kit/jest/lock-events.js';
import { rejectionOf, waitUntil } from '../test-kit/test-locks.js';

const faults = useFaultBed('unavailable');

describe('acquiring while DynamoDB does not answer', () => {
  it('refused connections: tryAcquireLock rejects with DynamoDBUnavailableError carrying the connection error', async () => {
    const network = await faults.proxied('refused', { sdkDefaults: true });
    const client = faults.bed.client({ ownerName: 'refused' }, network.dynamoDB);
    // The proxy stops listening: connections are refused by the operating system, as to a host that is down.
    await network.proxy.close();

    const error = await rejectionOf(client.tryAcquireLock('job', { additionalTimeToWaitForLock: 300, refreshPeriod: 100 }));

    expect(error).toBeInstanceOf(DynamoDBUnavailableError);
    expect(error).toBeInstanceOf(LockNotGrantedError);
    expect(isDynamoDBUnavailableError(error)).toBe(true);
    expect(isLockNotGrantedError(error)).toBe(true);
    expect((error as DynamoDBUnavailableError).holder).toBeUndefined();
    expect(String((error as Error).cause)).toMatch(/ECONNREFUSED/);
    expect((error as Error).message).toMatch(/ECONNREFUSED/);
  });

  it('a 503 on every attempt: acquireLock rejects with DynamoDBUnavailableError naming the service error', async () => {
    const network = await faults.proxied('unavailable-503', { sdkDefaults: true });
    const client = faults.bed.client({ ownerName: 'unavailable-503' }, network.dynamoDB);
    network.proxy.setRule(() => ({ action: 'respond', reply: dynamoDBErrorReply('ServiceUnavailable') }));

    const error = await rejectionOf(client.acquireLock('job', { additionalTimeToWaitForLock: 300, refreshPeriod: 100 }));

    expect(error).toBeInstanceOf(DynamoDBUnavailableError);
    expect((error as Error).cause).toMatchObject({ $metadata: { httpStatusCode: 503 } });
  });

  it('someone else holding the lock is still a plain refusal: tryAcquireLock resolves to undefined', async () => {
    // Held through both waits (a lease each) while the waiter runs in this worker too: a stalled worker does not cost it the lock.
    const holder = faults.bed.client({ ownerName: 'holder', leaseDuration: 3_000, heartbeatPeriod: 300 });
    await holder.acquireLock('job');
    const network = await faults.proxied('waiter', { sdkDefaults: true });
    const waiter = faults.bed.client({ ownerName: 'waiter' }, network.dynamoDB);

    await expect(waiter.tryAcquireLock('job', { additionalTimeToWaitForLock: 0, refreshPeriod: 100 })).resolves.toBeUndefined();
    const error = await rejectionOf(waiter.acquireLock('job', { additionalTimeToWaitForLock: 0, refreshPeriod: 100 }));
    expect(error).toBeInstanceOf(LockNotGrantedError);
    expect(error).not.toBeInstanceOf(DynamoDBUnavailableError);
    expect((error as LockNotGrantedError).holder?.ownerName).toBe('holder');
  });

  it('a DynamoDB that accepts connections and never answers: the call ends by its deadline with DynamoDBUnavailableError', async () => {
    // The SDK's default client has no request timeout: only the acquisition's own deadline can end it.
    const network = await faults.proxied('silent', { sdkDefaults: true });
    // Requests are cut off a lease after the call's deadline: 1 s + 3 s here.
    const client = faults.bed.client({ ownerName: 'silent', leaseDuration: 3_000, heartbeatPeriod: 1_000 }, network.dynamoDB);
    network.proxy.blackhole();

    const error = await within(
      rejectionOf(client.tryAcquireLock('job', { additionalTimeToWaitForLock: 1_000, refreshPeriod: 100 })),
      15_000,
      'tryAcquireLock ends',
    );

    expect(error).toBeInstanceOf(DynamoDBUnavailableError);
  }, 30_000);
});

describe('looking at locks while DynamoDB does not answer', () => {
  /** Every item of a listing, or the error it ends with. */
  async function drain(listing: AsyncIterable<unknown>): Promise<unknown[]> {
    const items: unknown[] = [];
    for await (const item of listing) items.push(item);
    return items;
  }

  it('a listing or a getLock over a dead connection is abandoned after a lease with DynamoDBTimeoutError, the TimeoutError as its cause', async () => {
    const network = await faults.proxied('looking', { sdkDefaults: true });
    const client = faults.bed.client({ ownerName: 'looking', leaseDuration: 1_500, heartbeatPeriod: 300 }, network.dynamoDB);
    await drain(client.getAllLocks()); // the key schema check behind listings, answered
    network.proxy.blackhole();

    const [scan, query, read] = await within(
      Promise.all([
        rejectionOf(drain(client.getAllLocks())),
        rejectionOf(drain(client.getLocksByPartitionKey('job'))),
        rejectionOf(client.getLock('job')),
      ]),
      10_000,
      'the listings and the read end',
    );

    for (const error of [scan, query, read]) {
      expect(error).toBeInstanceOf(DynamoDBTimeoutError);
      expect(error).toBeInstanceOf(DynamoDBLockError);
      expect(isDynamoDBTimeoutError(error)).toBe(true);
      expect(isLockNotGrantedError(error)).toBe(false); // nothing was asked to be granted
      expect(error).toMatchObject({ timeout: 1_500, message: expect.stringMatching(/did not answer within 1500 ms/) });
      expect((error as Error).cause).toMatchObject({ name: 'TimeoutError', message: expect.stringMatching(/^no answer within 1500 ms/) });
    }
    expect((read as Error).message).toMatch(/getLock\("job"\)/);
    expect((scan as Error).message).toMatch(/getAllLocks/);
    expect((query as Error).message).toMatch(/getLocksByPartitionKey\("job"\)/);
    network.proxy.passThrough();
    await expect(client.getLock('job')).resolves.toBeUndefined();
  }, 30_000);

  it('a caller who aborts a listing or a getLock gets the abort, not DynamoDBTimeoutError', async () => {
    const network = await faults.proxied('giving-up', { sdkDefaults: true });
    // A longer lease than the bound below: the bound of a lease cannot end these calls first.
    const client = faults.bed.client({ ownerName: 'giving-up', leaseDuration: 5_000, heartbeatPeriod: 300 }, network.dynamoDB);
    await drain(client.getAllLocks());
    network.proxy.blackhole();
    const caller = new AbortController();
    setTimeout(() => caller.abort(new Error('the caller gave up')), 300);

    const errors = await within(
      Promise.all([
        rejectionOf(drain(client.getAllLocks({ signal: caller.signal }))),
        rejectionOf(client.getLock('job', { signal: caller.signal })),
        rejectionOf(client.getLock('job', { signal: AbortSignal.timeout(300) })), // the caller's own TimeoutError
      ]),
      4_000, // before the bound of a lease could end them
      'the aborted calls end',
    );

    // Each ends with its caller's own reason, as an aborted acquisition does, not the SDK's AbortError.
    expect(errors[0]).toBe(caller.signal.reason);
    expect(errors[1]).toBe(caller.signal.reason);
    expect(errors[2]).toMatchObject({ name: 'TimeoutError' });
    expect(isDynamoDBLockError(errors[2])).toBe(false);
    // So does a call made with a signal that has already aborted.
    const late = await rejectionOf(client.getLock('job', { signal: caller.signal }));
    expect(late).toBe(caller.signal.reason);
  }, 30_000);

  it('an election observer whose read was abandoned reads again at its next poll instead of ending', async () => {
    const network = await faults.proxied('observer', { sdkDefaults: true });
    const client = faults.bed.client({ ownerName: 'observer', leaseDuration: 1_500, heartbeatPeriod: 300 }, network.dynamoDB);
    const stop = new AbortController();
    const seen: Array<string | undefined> = [];
    const observing = (async () => {
      for await (const leader of new LeaderElection(client, 'job', { pollInterval: 50 }).observe({ signal: stop.signal })) {
        seen.push(leader?.ownerName);
      }
      return 'stopped';
    })();
    await waitUntil('the observer saw that nobody leads', () => seen.length === 1);
    network.proxy.blackhole();
    // A read sent now is abandoned after a lease, as the observer's read is.
    expect(await within(rejectionOf(client.getLock('job')), 10_000, 'the read ends')).toBeInstanceOf(DynamoDBTimeoutError);

    network.proxy.passThrough();
    await faults.bed.client({ ownerName: 'leader' }).acquireLock('job');
    await waitUntil('the observer saw the leader', () => seen.includes('leader'));
    stop.abort();
    await expect(observing).resolves.toBe('stopped');
  }, 30_000);
});
