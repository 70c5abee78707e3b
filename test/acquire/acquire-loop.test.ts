/**
 * AcquireLoop: Java's decision on each observation of a lock (PROTOCOL.md §5),
 * judged without DynamoDB. Nothing here sends a request except the test of
 * a write whose outcome is unknown, whose "DynamoDB" never answers; the
 * requests themselves are tested against DynamoDB Local in
 * integration/acquire/.
 */
import { afterEach, describe, expect, it } from '@jest/globals';
import { AcquireLoop } from '../../src/acquire/acquire-lock.js';
import { lockObservation, unitAcquisitionParts } from '../../test-kit/acquisition-parts.js';
import { resolveAcquireOptions, type AcquireLockOptions } from '../../src/acquire/acquire-options.js';
import { LockObservationCache } from '../../src/acquire/observation-cache.js';
import { TAKEOVER_MARGIN_MS } from '../../src/acquire/stale-watch.js';
import { Turns } from '../../src/acquire/turns.js';
import { lockId } from '../../src/base/lock-key.js';
import type { DynamoDBSender } from '../../src/settings/options.js';
import type { LockObservation } from '../../src/dynamodb/read-lock.js';
import { DynamoDBUnavailableError } from '../../src/base/errors.js';
import type { LockRecord, LockTable } from '../../src/protocol/index.js';

const table: LockTable = { tableName: 'locks', partitionKeyName: 'key' };
const key = { partitionKey: 'k' };
const LEASE = 1_000;

/** A monotonic clock the test moves by hand. */
function manualClock() {
  let now = 0;
  return { now: () => now, set: (ms: number) => void (now = ms) };
}

/** A DynamoDB that must not be asked anything. */
const silent: DynamoDBSender = { send: () => Promise.reject(new Error('this test sends no request')) };

const loops: AcquireLoop[] = [];
afterEach(() => {
  for (const loop of loops.splice(0)) loop[Symbol.dispose]();
});

function loopOf(
  options: AcquireLockOptions = {},
  shared: {
    clock?: ReturnType<typeof manualClock>;
    dynamoDB?: DynamoDBSender;
    observations?: LockObservationCache;
    turns?: Turns;
  } = {},
) {
  const clock = shared.clock ?? manualClock();
  const ctx = unitAcquisitionParts({
    table,
    clock,
    dynamoDB: shared.dynamoDB ?? silent,
    leaseDurationMs: LEASE,
    heartbeatPeriodMs: 100,
    observations: shared.observations,
    turns: shared.turns,
  });
  const loop = new AcquireLoop(ctx, key, resolveAcquireOptions(ctx, options));
  loops.push(loop);
  return { loop, clock };
}

const observation = (observedAt: number, fields: Partial<LockRecord> = {}): LockObservation => lockObservation(observedAt, LEASE, fields);

describe('AcquireLoop.judge', () => {
  it('writes the new lock when there is no item, unless told to take only an existing one', () => {
    expect(loopOf().loop.judge(undefined)).toEqual({ kind: 'write', path: { kind: 'absent' }, existing: undefined });

    expect(loopOf({ acquireOnlyIfLockAlreadyExists: true }).loop.judge(undefined)).toEqual({ kind: 'retry', why: 'no-item' });
  });

  it('takes a released lock at once, conditioned on its RVN only with acquireReleasedLocksConsistently', () => {
    const released = observation(0, { isReleased: true });
    expect(loopOf().loop.judge(released)).toEqual({
      kind: 'write',
      path: { kind: 'released', readRecordVersionNumber: undefined },
      existing: released,
    });
    expect(loopOf({ acquireReleasedLocksConsistently: true }).loop.judge(released)).toMatchObject({
      kind: 'write',
      path: { kind: 'released', readRecordVersionNumber: 'rvn-1' },
    });
  });

  it('waits on a held lock until its RVN stayed unchanged for strictly longer than its lease, from the first observation, on its own clock', () => {
    const { loop, clock } = loopOf();
    expect(loop.judge(observation(100))).toEqual({ kind: 'wait' });
    clock.set(900);
    expect(loop.judge(observation(900))).toEqual({ kind: 'wait' }); // the same RVN again: timed from 100
    clock.set(100 + LEASE);
    expect(loop.judge(observation(100 + LEASE))).toEqual({ kind: 'wait' });
    clock.set(100 + LEASE + TAKEOVER_MARGIN_MS);
    expect(loop.judge(observation(100 + LEASE + TAKEOVER_MARGIN_MS))).toMatchObject({
      kind: 'write',
      path: { kind: 'expired', watchedRecordVersionNumber: 'rvn-1' },
      existing: { observedAt: 100 },
    });
  });

  it('restarts the timer when the holder heartbeats (a new RVN)', () => {
    const { loop, clock } = loopOf();
    loop.judge(observation(0));
    clock.set(800);
    expect(loop.judge(observation(800, { recordVersionNumber: 'rvn-2' }))).toEqual({ kind: 'wait' });
    clock.set(1_500);
    expect(loop.judge(observation(1_500, { recordVersionNumber: 'rvn-2' }))).toEqual({ kind: 'wait' });
    clock.set(1_801);
    expect(loop.judge(observation(1_801, { recordVersionNumber: 'rvn-2' }))).toMatchObject({
      path: { kind: 'expired', watchedRecordVersionNumber: 'rvn-2' },
    });
  });

  it('does not send again the write DynamoDB just refused on the same item, but does on a changed one', () => {
    const released = observation(0, { isReleased: true });
    const { loop } = loopOf();
    expect(loop.judge(released, { path: 'released', recordVersionNumber: 'rvn-1' })).toEqual({ kind: 'retry', why: 'refused-again' });

    expect(
      loop.judge(observation(0, { isReleased: true, recordVersionNumber: 'rvn-2' }), { path: 'released', recordVersionNumber: 'rvn-1' }).kind,
    ).toBe('write');
    expect(loop.judge(undefined, { path: 'absent', recordVersionNumber: undefined }).kind).toBe('retry');
  });

  it('shouldSkipBlockingWait: a held lock is unavailable, until a later call sees the same RVN after its lease', () => {
    const clock = manualClock();
    const observations = new LockObservationCache(10, clock);
    expect(loopOf({ shouldSkipBlockingWait: true }, { clock, observations }).loop.judge(observation(0))).toEqual({ kind: 'unavailable' });

    clock.set(LEASE + 1);
    expect(loopOf({ shouldSkipBlockingWait: true }, { clock, observations }).loop.judge(observation(LEASE + 1))).toMatchObject({
      kind: 'write',
      path: { kind: 'expired', watchedRecordVersionNumber: 'rvn-1' },
    });
  });

  it('a later observation of its own write whose outcome was unknown is the win; another RVN of ours, or a released one, is not', async () => {
    const clock = manualClock();
    const sentRecordVersionNumbers: string[] = [];
    // A DynamoDB that takes the request and never answers it: the write may or may not have been applied.
    const unanswered: DynamoDBSender = {
      send: (command) => {
        const item = (command as { input: { Item: Record<string, { S?: string }> } }).input.Item;
        sentRecordVersionNumbers.push(item.recordVersionNumber?.S as string);
        clock.set(1); // past the deadline when the failure arrives
        return Promise.reject(Object.assign(new Error('socket hang up'), { code: 'ECONNRESET' }));
      },
    };
    const { loop } = loopOf({ additionalTimeToWaitForLock: 0 }, { clock, dynamoDB: unanswered });
    await expect(loop.run()).rejects.toBeInstanceOf(DynamoDBUnavailableError);
    expect(sentRecordVersionNumbers).toHaveLength(1);
    const [sent] = sentRecordVersionNumbers as [string];

    const ours = loop.judge(observation(5, { ownerName: 'me', recordVersionNumber: sent }));
    expect(ours.kind).toBe('ours');
    expect(ours.kind === 'ours' && ours.acquisition.record.recordVersionNumber).toBe(sent);

    expect(loop.judge(observation(5, { ownerName: 'me', recordVersionNumber: 'rvn-other' })).kind).toBe('wait');
    expect(loop.judge(observation(5, { ownerName: 'me', recordVersionNumber: sent, isReleased: true })).kind).toBe('write');
  });
});

describe('AcquireLoop: turns', () => {
  /** A client that waited for another owner, then had its turn and released the lock. */
  function afterOwnTurn(clock: ReturnType<typeof manualClock>): Turns {
    const turns = new Turns(clock, 10);
    const id = lockId(key);
    turns.taken(turns.plan(id, { refreshMs: 100, turnLengthMs: 200, mayWait: true }), clock.now(), true);
    turns.released(id);
    return turns;
  }

  it('a waiter takes a lock it reads free at once, also after a turn of its own', () => {
    const clock = manualClock();
    const { loop } = loopOf({}, { clock, turns: afterOwnTurn(clock) });
    expect(loop.judge(undefined).kind).toBe('write');
  });

  it("counts only another owner's hold as waiting for someone, not this client's own lock item", () => {
    const clock = manualClock();
    const { loop } = loopOf({}, { clock });
    loop.judge(observation(0, { ownerName: 'me' }));
    expect(loop.waitedForAnother).toBe(false);
    loop.judge(observation(0, { ownerName: 'other' }));
    expect(loop.waitedForAnother).toBe(true);
  });
});
