/**
 * Regression tests for defects found while writing the integration tests:
 * per-lock leases, close() racing an acquisition, and copies of lock data.
 */
import { describe, expect, it } from '@jest/globals';
import { InvalidArgumentError, LockClientClosedError } from '../../src/index.js';
import { recording, sleep, text, watch } from '../../test-kit/test-locks.js';
import { useLockTestBed } from '../../test-kit/jest/lock-test-bed-hook.js';

const bed = useLockTestBed('lock-bugs');

describe('a per-lock lease must leave room for two heartbeats', () => {
  it('acquireLock refuses a leaseDuration below 2 × heartbeatPeriod before writing anything', async () => {
    // The client itself is valid (2000 ≥ 2 × 500); the per-acquire lease is not.
    const client = bed.client({ ownerName: 'short-lease', leaseDuration: 2_000, heartbeatPeriod: 500 });
    const refusal = await client.acquireLock('short', { leaseDuration: 400 }).catch((error: unknown) => error);
    expect(refusal).toBeInstanceOf(InvalidArgumentError);
    expect((refusal as InvalidArgumentError).code).toBe('LEASE_TOO_SHORT');
    expect(await bed.item('short')).toBeUndefined();
  }, 20_000);

  it('sendHeartbeat refuses such a lease and the lock stays held', async () => {
    // A lease its heartbeats keep through an event loop that a loaded machine stalls for over a second.
    const client = bed.client({ ownerName: 'shrinker', leaseDuration: 3_000, heartbeatPeriod: 500 });
    const lock = await client.acquireLock('shrunk');
    const refusal = await client.sendHeartbeat(lock, { leaseDuration: 300 }).catch((error: unknown) => error);
    expect(refusal).toBeInstanceOf(InvalidArgumentError);
    expect((refusal as InvalidArgumentError).code).toBe('LEASE_TOO_SHORT');
    await sleep(1_500);
    expect(lock.state).toBe('held');
    expect(client.hasLock('shrunk')).toBe(true);
  }, 20_000);
});

describe('close() and an acquisition whose write is in flight', () => {
  it('close() waits for the write to land and the lock to be released again', async () => {
    const recorder = recording(bed.dynamoDBClient('closing'));
    const client = bed.client({ ownerName: 'closing', leaseDuration: 1_000, heartbeatPeriod: 250 }, recorder.dynamoDB);
    let openGate!: () => void;
    const gate = new Promise<void>((resolve) => (openGate = resolve));
    let putSent!: () => void;
    const putStarted = new Promise<void>((resolve) => (putSent = resolve));
    recorder.hold = async (command) => {
      if (command.name !== 'PutItemCommand') return;
      putSent();
      await gate;
    };

    const acquiring = watch(client.acquireLock('in-flight'));
    await putStarted;
    const closing = watch(client.close());
    await sleep(300);
    const closeResolvedBeforeTheWriteLanded = closing.settled();
    openGate();

    await expect(acquiring.promise).rejects.toBeInstanceOf(LockClientClosedError);
    await closing.promise;
    // A caller may exit right after `await close()`: nothing may be left held.
    expect(closeResolvedBeforeTheWriteLanded).toBe(false);
    expect(await bed.item('in-flight')).toBeUndefined();
  }, 20_000);
});

describe('lock data is copied, Buffers included', () => {
  it('mutating the Buffer passed as data after calling acquireLock changes neither the stored nor the lock’s data', async () => {
    const client = bed.client({ ownerName: 'buffer-user', leaseDuration: 1_000, heartbeatPeriod: 250 });
    const buffer = Buffer.from('original');
    const acquiring = client.acquireLock('buffered', { data: buffer });
    buffer.write('MUTATED!'); // the caller reuses its buffer; the lock should not see this
    const lock = await acquiring;

    expect(text((await bed.item('buffered'))?.['data']?.B)).toBe('original');
    expect(text(lock.data)).toBe('original');
  }, 20_000);

  it('the bytes returned by Lock.data are a copy', async () => {
    const client = bed.client({ ownerName: 'buffer-reader', leaseDuration: 1_000, heartbeatPeriod: 250 });
    const lock = await client.acquireLock('aliased', { data: Buffer.from('original') });
    const copy = lock.data!;
    copy.set(new TextEncoder().encode('MUTATED!'));
    expect(text(lock.data)).toBe('original');
  }, 20_000);
});

describe('a release DynamoDB refused without applying it', () => {
  it('ends the lock for its holder as it began, leaves the item ours and unheartbeated, and a later release deletes it', async () => {
    const recorder = recording(bed.dynamoDBClient('refused'));
    const client = bed.client({ ownerName: 'refused', leaseDuration: 2_000, heartbeatPeriod: 250 }, recorder.dynamoDB);
    const lock = await client.acquireLock('refused-release');
    let refuseNextDelete = true;
    recorder.hold = async (command) => {
      if (command.name !== 'DeleteItemCommand' || !refuseNextDelete) return;
      refuseNextDelete = false;
      // What the SDK throws when DynamoDB throttles its only attempt: an HTTP 400 answer, nothing applied.
      throw Object.assign(new Error('Rate of requests exceeds the allowed throughput.'), {
        name: 'ProvisionedThroughputExceededException',
        $fault: 'client',
        $metadata: { httpStatusCode: 400, attempts: 1 },
      });
    };

    await expect(lock.release()).rejects.toMatchObject({ name: 'ProvisionedThroughputExceededException' });
    expect(lock.state).toBe('lost');
    expect(lock.signal.aborted).toBe(true);
    expect(client.hasLock('refused-release')).toBe(false);
    const rvnLeft = await bed.rvn('refused-release');
    expect(rvnLeft).toBe(lock.recordVersionNumber);
    await sleep(750); // three heartbeat periods: none is sent for a lock its holder let go
    expect(await bed.rvn('refused-release')).toBe(rvnLeft);

    expect(await lock.release()).toBe(true);
    expect(lock.state).toBe('released');
    expect(await bed.item('refused-release')).toBeUndefined();
  }, 20_000);
});

describe('holdLockOnServiceUnavailable', () => {
  const serviceUnavailable = (): Error =>
    Object.assign(new Error('Service unavailable'), {
      name: 'ServiceUnavailable',
      $fault: 'server',
      $metadata: { httpStatusCode: 503 },
    });

  // A lease that 503 answers keep through an event loop that a loaded machine stalls for over a second.
  const LEASE_MS = 3_000;

  async function holderBehind503(holdLockOnServiceUnavailable: boolean) {
    const recorder = recording(bed.dynamoDBClient(`h503${String(holdLockOnServiceUnavailable)}`));
    const client = bed.client(
      { ownerName: `h503-${String(holdLockOnServiceUnavailable)}`, leaseDuration: LEASE_MS, heartbeatPeriod: 250, holdLockOnServiceUnavailable },
      recorder.dynamoDB,
    );
    const key = `unavailable-${String(holdLockOnServiceUnavailable)}`;
    const lock = await client.acquireLock(key);
    const rvn = lock.recordVersionNumber;
    recorder.hold = async (command) => {
      if (command.name === 'UpdateItemCommand') throw serviceUnavailable();
    };
    await sleep(LEASE_MS + 300); // heartbeats answered 503 for longer than the lease
    return { lock, rvn, key };
  }

  it('on: the lock is kept locally although its RVN in the table never changed (the documented risk)', async () => {
    const { lock, rvn, key } = await holderBehind503(true);
    expect(lock.state).toBe('held');
    expect(lock.isExpired()).toBe(false);
    expect(lock.recordVersionNumber).toBe(rvn);
    expect((await bed.item(key))?.['recordVersionNumber']?.S).toBe(rvn);
  }, 20_000);

  it('off (the default): the lock is given up once its lease ran out without a confirmed heartbeat', async () => {
    const { lock } = await holderBehind503(false);
    expect(lock.isExpired()).toBe(true);
    expect(lock.state).toBe('lost');
  }, 20_000);
});
