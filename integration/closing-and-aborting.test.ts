/**
 * Ending work the user asked to end: close() and an aborted acquireLock()
 * end even while a write is unanswered; a lock close() could not release is
 * reported lost, not left looking held; `await using` releases what
 * `release()` would; a release that gets no answer ends after a lease.
 */
import { describe, expect, it } from '@jest/globals';
import { DynamoDBTimeoutError, LockClientCloseError, LockClientClosedError, LockLostError, type Lock, type LockClient } from '../src/index.js';
import { useFaultBed } from '../test-kit/jest/fault-bed.js';
import { dynamoDBErrorReply, operationOf, type ProxiedRequest } from '../test-kit/fault-proxy.js';
import { abortOf, recordEvents, thrownBy, within, type EventLog } from '../test-kit/jest/lock-events.js';
import { SHORT_LEASE } from '../test-kit/short-lease.js';
import { rejectionOf } from '../test-kit/test-locks.js';

const faults = useFaultBed('closing');

const isPutItem = (request: ProxiedRequest): boolean => operationOf(request) === 'PutItem';

describe('an acquisition write that gets no answer', () => {
  it("acquireLock({ signal }) rejects with the signal's reason when it aborts", async () => {
    // The SDK's defaults: no request timeout, so only the signal can end the call.
    const network = await faults.proxied('aborted', { sdkDefaults: true });
    const client = faults.bed.client({ ownerName: 'aborted' }, network.dynamoDB);
    network.proxy.setRule((request) => (isPutItem(request) ? { action: 'blackhole' } : { action: 'forward' }));
    const controller = new AbortController();

    const acquiring = client.acquireLock('job', { signal: controller.signal });
    await within(
      (async () => {
        while (!network.proxy.exchanges.some((e) => isPutItem(e.request))) await new Promise((resolve) => setTimeout(resolve, 20));
      })(),
      10_000,
      'the acquisition write is sent',
    );
    controller.abort(new Error('the caller gave up'));

    expect(await within(rejectionOf(acquiring), 5_000, 'acquireLock ends after its signal aborted')).toMatchObject({
      message: 'the caller gave up',
    });
  }, 30_000);

  it('close({ timeout }) ends, and the acquisition rejects with LockClientClosedError', async () => {
    const network = await faults.proxied('closed', { sdkDefaults: true });
    const client = faults.bed.client({ ownerName: 'closed' }, network.dynamoDB);
    network.proxy.setRule((request) => (isPutItem(request) ? { action: 'blackhole' } : { action: 'forward' }));

    const acquiring = rejectionOf(client.acquireLock('job'));
    await within(
      (async () => {
        while (!network.proxy.exchanges.some((e) => isPutItem(e.request))) await new Promise((resolve) => setTimeout(resolve, 20));
      })(),
      10_000,
      'the acquisition write is sent',
    );

    await within(client.close({ timeout: 500 }), 5_000, 'close() ends');
    expect(await within(acquiring, 5_000, 'acquireLock ends after close()')).toBeInstanceOf(LockClientClosedError);
  }, 30_000);
});

describe('a read that gets no answer', () => {
  it('close() ends getLock and a listing whose request is unanswered: both reject with LockClientClosedError', async () => {
    const network = await faults.proxied('reads', { sdkDefaults: true });
    const client = faults.bed.client({ ownerName: 'reads' }, network.dynamoDB);
    const isRead = (request: ProxiedRequest): boolean => ['GetItem', 'Scan'].includes(operationOf(request) ?? '');
    network.proxy.setRule((request) => (isRead(request) ? { action: 'blackhole' } : { action: 'forward' }));

    const reading = rejectionOf(client.getLock('job'));
    const listing = rejectionOf(
      (async () => {
        for await (const lock of client.getAllLocks()) void lock;
      })(),
    );
    await within(
      (async () => {
        while (network.proxy.exchanges.filter((e) => isRead(e.request)).length < 2) await new Promise((resolve) => setTimeout(resolve, 20));
      })(),
      10_000,
      'both reads are sent',
    );

    await within(client.close({ timeout: 500 }), 5_000, 'close() ends');
    expect(await within(reading, 2_000, 'getLock ends after close()')).toBeInstanceOf(LockClientClosedError);
    expect(await within(listing, 2_000, 'the listing ends after close()')).toBeInstanceOf(LockClientClosedError);
  }, 30_000);
});

describe('a release that gets no answer', () => {
  const LEASE_MS = SHORT_LEASE.leaseDuration;
  const isDeleteItem = (request: ProxiedRequest): boolean => operationOf(request) === 'DeleteItem';

  /** A lock held through the README's client, whose DeleteItem requests then go to a connection that never answers. */
  async function heldBehindSilence(ownerName: string): Promise<{ lock: Lock; events: EventLog }> {
    // The SDK's defaults: nothing but the library ends a request that is never answered.
    const network = await faults.proxied(ownerName, { sdkDefaults: true });
    const client = faults.bed.client({ ownerName, ...SHORT_LEASE }, network.dynamoDB);
    const events = recordEvents(client);
    const lock = await client.acquireLock('job');
    network.proxy.setRule((request) => (isDeleteItem(request) ? { action: 'blackhole' } : { action: 'forward' }));
    return { lock, events };
  }

  it("release() rejects with DynamoDBTimeoutError after a lease; the lock ends, still its owner's in the table, to lapse", async () => {
    const { lock, events } = await heldBehindSilence('silent-release');

    const error = await within(rejectionOf(lock.release()), LEASE_MS + 3_000, 'release() ends');

    expect(error).toBeInstanceOf(DynamoDBTimeoutError);
    expect(error).toMatchObject({ timeout: LEASE_MS, message: expect.stringContaining('release(') });
    expect(lock.state).toBe('lost');
    expect(lock.signal.aborted).toBe(true);
    expect(events.of('lost')).toEqual([]); // the caller let it go: no loss to announce
    expect(await faults.bed.owner('job')).toBe('silent-release');
  }, 30_000);

  it('release({ bestEffort: true }) and the end of an `await using` scope end after a lease too', async () => {
    const { lock: first } = await heldBehindSilence('best-effort');
    expect(await within(first.release({ bestEffort: true }), LEASE_MS + 3_000, 'release({ bestEffort }) ends')).toBe(false);

    const { lock: second } = await heldBehindSilence('scoped');
    const disposed = await within(rejectionOf(second[Symbol.asyncDispose]()), LEASE_MS + 3_000, 'the scope ends');
    expect(disposed).toBeInstanceOf(DynamoDBTimeoutError);
    expect(second.state).toBe('lost');
  }, 30_000);
});

describe('a release applied while its reply is lost, with code still acting on the lock', () => {
  // The signal is what that code honours: it must abort before anyone else can hold the lock.
  it.each([
    ['close()', (lock: Lock, client: LockClient) => client.close()],
    ['release() from elsewhere', (lock: Lock) => lock.release()],
  ])(
    '%s: the signal has aborted by the time another client holds the lock',
    async (_, release) => {
      const network = await faults.proxied('releaser', { sdkDefaults: true });
      const client = faults.bed.client({ ownerName: 'releaser', leaseDuration: 5_000, heartbeatPeriod: 1_000 }, network.dynamoDB);
      const lock = await client.acquireLock('job');
      const other = faults.bed.client({ ownerName: 'next' });
      const lost = network.proxy.loseReplyThenRetries((request) => operationOf(request) === 'DeleteItem', {
        action: 'forward',
        delayMs: 1_000,
      });

      const releasing = release(lock, client).catch(() => undefined); // its outcome is not what this test is about
      await within(lost, 5_000, 'the release applied, its reply lost');
      const next = await within(other.acquireLock('job', { refreshPeriod: 50 }), 5_000, 'the next client acquires');
      const abortedWhenTaken = lock.signal.aborted;
      await releasing;

      next.throwIfLost();
      expect(abortedWhenTaken).toBe(true);
      expect(lock.signal.reason).toBeInstanceOf(LockLostError);
      expect((lock.signal.reason as LockLostError).kind).toBe('released');
    },
    30_000,
  );
});

describe('close() when DynamoDB refuses a release', () => {
  it('ends the lock as lost, its signal aborted, and reports the refusal, rather than it staying "held" with nothing keeping it', async () => {
    const network = await faults.proxied('refused-release', { sdkDefaults: true });
    const client = faults.bed.client({ ownerName: 'refused-release', leaseDuration: 3_000, heartbeatPeriod: 600 }, network.dynamoDB);
    const events = recordEvents(client);
    const lock = await client.acquireLock('job');
    network.proxy.setRule((request) =>
      operationOf(request) === 'DeleteItem' ? { action: 'respond', reply: dynamoDBErrorReply('AccessDeniedException') } : { action: 'forward' },
    );

    const error = await rejectionOf(client.close());

    expect(error).toBeInstanceOf(LockClientCloseError);
    expect((error as LockClientCloseError).errors).toEqual([expect.objectContaining({ name: 'AccessDeniedException' })]);
    const { reason } = await abortOf(lock.signal, 1_000);
    expect(reason).toBeInstanceOf(LockLostError);
    expect(lock.state).toBe('lost');
    expect(thrownBy(() => lock.throwIfLost())).toBeInstanceOf(LockLostError);
    expect(events.of('lost')).toEqual([]); // the client let it go, and close() reports why it lapses
    expect(await faults.bed.owner('job')).toBe('refused-release');
  }, 30_000);
});

describe('`await using` on a lock whose lease ran out locally', () => {
  it("releases it, as release() does: the item, still this client's, is deleted", async () => {
    const client = faults.bed.client({ ownerName: 'lapsed', leaseDuration: 1_000, backgroundHeartbeats: false });
    const lock = await client.acquireLock('job');
    const { reason } = await abortOf(lock.signal, 5_000);
    expect(reason).toMatchObject({ kind: 'expired' });
    expect(await faults.bed.owner('job')).toBe('lapsed');

    await lock[Symbol.asyncDispose]();

    expect(await faults.bed.item('job')).toBeUndefined();
  }, 30_000);
});
