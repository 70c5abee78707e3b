/**
 * A lock bounded by its holder's invocation (`invocationDeadline`), against
 * DynamoDB Local: every write states a lease that ends by the deadline plus
 * the kill overrun, counted from when it leaves; the lock ends (kind
 * `deadline`) a safety margin before the deadline and is not written after;
 * a waiter, ours or one shaped like Java's, takes it over about the
 * remaining time after the holder's last write, not the configured lease.
 * Bad input is refused before anything is sent.
 */
import { describe, expect, it } from '@jest/globals';
import { InvalidArgumentError, LockLostError, LockNotGrantedError, type Lock } from '../../src/index.js';
import { loadJavaScenarios } from '../../test-kit/java-fixtures.js';
import { JAVA_TAKEOVER_KEY, takeOverLikeJava } from '../../test-kit/java-waiter.js';
import { useLockTestBed } from '../../test-kit/jest/lock-test-bed-hook.js';
import { abortOf } from '../../test-kit/jest/lock-events.js';
import { lockRequests, recording, rejectionOf, sleep, type RecordingDynamoDB } from '../../test-kit/test-locks.js';

const bed = useLockTestBed('bounded');
const scenarios = loadJavaScenarios();

/** A long configured lease (20 s, margin 2 s), against which a bounded one is short. */
const LEASE = 20_000;
const HOLDER = { leaseDuration: LEASE, heartbeatPeriod: 500 } as const;
/** The safety margin of that lease: a tenth. */
const MARGIN = LEASE / 10;
/** The invocation: 4 s left, stopped at most 1 s after its deadline. */
const REMAINING_MS = 4_000;
const KILL_OVERRUN_MS = 1_000;
/** Room for a poll, a write and a loaded machine, beyond the deadline plus the overrun. */
const SLACK_MS = 3_000;

/** Each lock write the recorder sent, as a function that lists them: when it was handed to the SDK, and the lease it states. */
function leasesSent(recorder: RecordingDynamoDB): () => { at: number; leaseMs: number }[] {
  const sentAt = new Map<object, number>();
  recorder.hold = (command) => void sentAt.set(command, performance.now());
  return () =>
    lockRequests(recorder).flatMap((command) => {
      const values = command.input['ExpressionAttributeValues'] as Record<string, { S?: string }> | undefined;
      const item = command.input['Item'] as Record<string, { S?: string }> | undefined;
      const lease = values?.[':ld']?.S ?? item?.['leaseDuration']?.S;
      return lease === undefined ? [] : [{ at: sentAt.get(command) ?? NaN, leaseMs: Number(lease) }];
    });
}

/** A holder that acquires `key` bounded by an invocation with {@link REMAINING_MS} left; its writes are recorded. */
async function boundedHolder(key: string): Promise<{ lock: Lock; deadline: number; writes: () => { at: number; leaseMs: number }[] }> {
  const recorder = recording(bed.dynamoDBClient('invocation'));
  const writes = leasesSent(recorder);
  const client = bed.client({ ownerName: 'invocation', ...HOLDER }, recorder.dynamoDB);
  const deadline = performance.now() + REMAINING_MS;
  const lock = await client.acquireLock(key, { invocationDeadline: { at: deadline, killOverrunMs: KILL_OVERRUN_MS } });
  return { lock, deadline, writes };
}

describe('a lock bounded by its invocation', () => {
  it('states on every write a lease ending by the deadline plus the overrun, ends before the deadline, and is not written after', async () => {
    const { lock, deadline, writes } = await boundedHolder('job');
    const lost = await abortOf(lock.signal, REMAINING_MS + SLACK_MS);
    expect(lost.reason).toBeInstanceOf(LockLostError);
    expect(lost.reason).toMatchObject({ kind: 'deadline' });
    // A heartbeat that finds less safe time left than a round trip takes (at most a period) gives the lock up then.
    expect(lost.at).toBeGreaterThanOrEqual(deadline - MARGIN - HOLDER.heartbeatPeriod);
    expect(lock.isHeld()).toBe(false);
    const written = writes();
    const rvn = await bed.rvn('job');
    // The acquisition and the heartbeats every 500 ms before the safe time ended (at 2 s): at least one on a loaded machine.
    expect(written.length).toBeGreaterThanOrEqual(2);
    for (const write of written) {
      expect(write.leaseMs).toBeLessThan(LEASE);
      expect(write.at + write.leaseMs).toBeLessThanOrEqual(deadline + KILL_OVERRUN_MS + 100);
    }
    await sleep(3 * HOLDER.heartbeatPeriod);
    expect({ writes: writes().length, rvn: await bed.rvn('job') }).toEqual({ writes: written.length, rvn });
  }, 30_000);

  it('bounds manual heartbeats too, a longer lease asked for included', async () => {
    const client = bed.client({ ownerName: 'manual', leaseDuration: LEASE, heartbeatPeriod: 5_000, backgroundHeartbeats: false });
    const deadline = performance.now() + REMAINING_MS;
    const lock = await client.acquireLock('job', { invocationDeadline: { at: deadline, killOverrunMs: KILL_OVERRUN_MS } });
    for (const leaseDuration of [undefined, 3 * LEASE]) {
      const sentAt = performance.now();
      await lock.sendHeartbeat(leaseDuration === undefined ? {} : { leaseDuration });
      const stated = Number((await bed.item('job'))?.['leaseDuration']?.S);
      // Stated again as the write left (a moment after the holder counted its own): never longer than the holder's.
      expect(stated).toBeLessThanOrEqual(lock.leaseDuration);
      expect(sentAt + stated).toBeLessThanOrEqual(deadline + KILL_OVERRUN_MS);
      expect(stated).toBeGreaterThan(REMAINING_MS + KILL_OVERRUN_MS - SLACK_MS);
    }
  }, 30_000);

  it('is taken over by our waiter about the remaining time after its last write, never before it ended', async () => {
    const { lock, deadline } = await boundedHolder('job');
    const holderEnded = abortOf(lock.signal, REMAINING_MS + SLACK_MS);
    const waiter = bed.client({ ownerName: 'next', leaseDuration: LEASE, heartbeatPeriod: 5_000 });
    const theirs = await waiter.acquireLock('job', { refreshPeriod: 100, additionalTimeToWaitForLock: LEASE });
    const takenAt = performance.now();
    expect(takenAt).toBeGreaterThan((await holderEnded).at);
    expect(takenAt).toBeGreaterThanOrEqual(deadline);
    expect(takenAt).toBeLessThan(deadline + KILL_OVERRUN_MS + SLACK_MS);
    expect(theirs.isHeld()).toBe(true);
  }, 40_000);

  it('is taken over by a Java-shaped waiter, which reads only the lease on the item, about the remaining time after its last write', async () => {
    const { lock, deadline } = await boundedHolder(JAVA_TAKEOVER_KEY);
    const holderEnded = abortOf(lock.signal, REMAINING_MS + SLACK_MS);
    const java = await takeOverLikeJava(bed.raw, scenarios, bed.tableName);
    expect(java.takenAt).toBeGreaterThan((await holderEnded).at);
    expect(java.leaseMs).toBeLessThan(LEASE);
    expect(java.takenAt).toBeGreaterThanOrEqual(deadline);
    expect(java.takenAt).toBeLessThan(deadline + KILL_OVERRUN_MS + SLACK_MS);
    expect(await bed.owner(JAVA_TAKEOVER_KEY)).toBe('owner-B');
  }, 40_000);

  it('refuses bad deadlines with typed errors before sending anything, and gives up waiting when the safe time would end', async () => {
    const recorder = recording(bed.dynamoDBClient('checked'));
    const client = bed.client({ ownerName: 'checked', ...HOLDER }, recorder.dynamoDB);
    const refusal = async (invocationDeadline: unknown): Promise<unknown> =>
      rejectionOf(client.acquireLock('job', { invocationDeadline } as Parameters<typeof client.acquireLock>[1]));
    for (const [given, code] of [
      [{ remainingMs: Number.NaN }, 'INVALID_DEADLINE'],
      [{ remainingMs: -5 }, 'DEADLINE_TOO_SOON'],
      [{ at: performance.now() - 1 }, 'DEADLINE_TOO_SOON'],
      // The safety margin of a 20 s lease is 2 s: 1.5 s would leave the lock no safe time.
      [{ remainingMs: 1_500 }, 'DEADLINE_TOO_SOON'],
    ] as const) {
      const error = await refusal(given);
      expect(error).toBeInstanceOf(InvalidArgumentError);
      expect(error).toMatchObject({ code });
    }
    expect(lockRequests(recorder)).toEqual([]);

    const other = bed.client({ ownerName: 'other', ...HOLDER });
    await other.acquireLock('job');
    const started = performance.now();
    const gaveUp = await rejectionOf(
      client.acquireLock('job', { invocationDeadline: { remainingMs: 3_000 }, additionalTimeToWaitForLock: LEASE }),
    );
    expect(gaveUp).toBeInstanceOf(LockNotGrantedError);
    expect(performance.now() - started).toBeGreaterThanOrEqual(1_000 - 5);
    expect(await bed.owner('job')).toBe('other');
  }, 30_000);
});
