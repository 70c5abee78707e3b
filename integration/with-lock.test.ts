/**
 * client.withLock(key, routine): the lock is held exactly while the routine
 * runs, the routine hears at once when it no longer is, and the release
 * afterwards neither touches a lock someone else took nor hangs.
 */
import { describe, expect, it } from '@jest/globals';
import { LockLostError, type Lock, type LockClient } from '../src/index.js';
import { useFaultBed } from '../test-kit/jest/fault-bed.js';
import { operationOf } from '../test-kit/fault-proxy.js';
import { within } from '../test-kit/jest/lock-events.js';
import { stealLock } from '../test-kit/tamper.js';
import { rejectionOf, watch } from '../test-kit/test-locks.js';

const LEASE_MS = 2_000;
const HEARTBEAT_MS = 400;

const faults = useFaultBed('with-lock');

const newClient = (ownerName: string) => faults.bed.client({ ownerName, leaseDuration: LEASE_MS, heartbeatPeriod: HEARTBEAT_MS });

const RELEASE_TIMEOUT_MS = 300;
/**
 * The lease of a client whose release is cut off by releaseTimeout: far longer than the bound on withLock's settling
 * below, so that a release abandoned only after a lease would miss it.
 */
const STRANDED_LEASE_MS = 10_000;

/**
 * Runs withLock with a routine that silences the network (`silence`) and
 * returns 'done'; resolves with the result and how long withLock took to
 * settle after the routine returned.
 */
async function settleAfterSilencing(client: LockClient, key: string, silence: () => Promise<void> | void) {
  let routineEndedAt = NaN;
  const settling = watch(
    client.withLock(
      key,
      async () => {
        await silence();
        routineEndedAt = performance.now();
        return 'done';
      },
      { releaseTimeout: RELEASE_TIMEOUT_MS },
    ),
  );
  const result = await within(settling.promise, 15_000, 'withLock settling');
  return { result, msAfterRoutine: settling.settledAt()! - routineEndedAt };
}

/** Resolves when `signal` aborts, with its reason. */
const aborted = (signal: AbortSignal): Promise<unknown> =>
  new Promise((resolve) => {
    if (signal.aborted) resolve(signal.reason);
    else signal.addEventListener('abort', () => resolve(signal.reason), { once: true });
  });

describe('withLock', () => {
  it('runs the routine while holding the lock, returns its result, and releases afterwards', async () => {
    const client = newClient('worker');
    let ownerDuringRoutine: string | undefined;
    let seenLock: Lock | undefined;

    const result = await client.withLock('job', async (signal, lock) => {
      seenLock = lock;
      ownerDuringRoutine = await faults.bed.owner('job');
      expect(signal.aborted).toBe(false);
      return { answer: 42 };
    });

    expect(result).toEqual({ answer: 42 });
    expect(ownerDuringRoutine).toBe('worker');
    expect(seenLock?.state).toBe('released');
    expect(await faults.bed.item('job')).toBeUndefined();
  }, 20_000);

  it('releases when the routine throws, and the error reaches the caller unchanged', async () => {
    const client = newClient('failing');
    const failure = new Error('the routine failed');

    const thrown = await rejectionOf(
      client.withLock('failing-job', () => {
        throw failure;
      }),
    );
    const rejected = await rejectionOf(client.withLock('failing-job', async () => Promise.reject(failure)));

    expect(thrown).toBe(failure);
    expect(rejected).toBe(failure);
    expect(await faults.bed.item('failing-job')).toBeUndefined();
  }, 20_000);

  it('aborts the routine’s signal with a LockLostError when the lock is stolen, and releases nothing it no longer owns', async () => {
    // A lease far longer than the bound below: a loss found by expiry, not by the refused heartbeat, would miss it.
    const robbedLease = 5_000;
    const client = faults.bed.client({ ownerName: 'robbed', leaseDuration: robbedLease, heartbeatPeriod: HEARTBEAT_MS });
    let thiefRvn = '';
    let stolenAt = NaN;

    const settling = watch(
      client.withLock('robbed-job', async (signal) => {
        thiefRvn = await stealLock(faults.bed, 'robbed-job', 'thief');
        stolenAt = performance.now();
        // Waits for as long as the lock is held: only the loss of the lock ends this routine.
        throw await aborted(signal);
      }),
    );
    const outcome = await within(rejectionOf(settling.promise), robbedLease + 3_000, 'withLock settling after the theft');

    // Noticed by the next heartbeat, with slack for a busy machine (expiry would take over 4 s); the release is not even attempted.
    expect(settling.settledAt()! - stolenAt).toBeLessThan(HEARTBEAT_MS + 2_500);
    expect(outcome).toBeInstanceOf(LockLostError);
    expect((outcome as LockLostError).kind).toBe('taken');
    expect((outcome as LockLostError).holder?.ownerName).toBe('thief');
    expect(await faults.bed.owner('robbed-job')).toBe('thief');
    expect(await faults.bed.rvn('robbed-job')).toBe(thiefRvn);
  }, 20_000);

  it('aborts the routine’s signal when the caller’s own signal aborts, and still releases', async () => {
    const client = newClient('cancelled');
    const caller = new AbortController();
    const reason = new Error('the caller gave up');

    const seen = await client.withLock(
      'cancelled-job',
      async (signal, lock) => {
        setTimeout(() => caller.abort(reason), 10);
        return { reason: await aborted(signal), lockSignalAborted: lock.signal.aborted };
      },
      { signal: caller.signal },
    );

    expect(seen.reason).toBe(reason);
    // The caller gave up; the lock itself was not lost.
    expect(seen.lockSignalAborted).toBe(false);
    expect(await faults.bed.item('cancelled-job')).toBeUndefined();
  }, 20_000);

  it('bounds the release by releaseTimeout when DynamoDB stops answering', async () => {
    // The SDK would wait far longer than releaseTimeout: only withLock's own bound can end the release early.
    const network = await faults.proxied('stranded', { requestTimeout: 30_000 });
    const client = faults.bed.client(
      { ownerName: 'stranded', leaseDuration: STRANDED_LEASE_MS, heartbeatPeriod: HEARTBEAT_MS },
      network.dynamoDB,
    );

    const { result, msAfterRoutine } = await settleAfterSilencing(client, 'stranded-job', () => network.proxy.blackhole());

    expect(result).toBe('done');
    expect(msAfterRoutine).toBeLessThan(RELEASE_TIMEOUT_MS + 3_000);
    expect(network.proxy.exchanges.some((e) => e.fault.action === 'blackhole' && operationOf(e.request) === 'DeleteItem')).toBe(true);
    // The release never arrived: the item stays until its lease lapses.
    expect(await faults.bed.owner('stranded-job')).toBe('stranded');
  }, 20_000);

  it('bounds the release by releaseTimeout also when a heartbeat of the lock is stuck in flight', async () => {
    const network = await faults.proxied('stuck', { requestTimeout: 30_000 });
    // A long lease: the stuck heartbeat may wait for most of it, far longer than releaseTimeout.
    const client = faults.bed.client({ ownerName: 'stuck', leaseDuration: STRANDED_LEASE_MS, heartbeatPeriod: 1_000 }, network.dynamoDB);

    const { result, msAfterRoutine } = await settleAfterSilencing(client, 'stuck-job', async () => {
      await network.proxy.injectOnce((request) => operationOf(request) === 'UpdateItem', { action: 'blackhole' });
      network.proxy.blackhole(); // and the release after it
    });

    expect(result).toBe('done');
    expect(msAfterRoutine).toBeLessThan(RELEASE_TIMEOUT_MS + 3_000);
  }, 30_000);
});
