/**
 * AcquireDeadline: an acquisition waits `additionalTimeToWaitForLock` plus
 * the first holder's lease, and its requests are cut off a grace past that.
 * Fake timers drive setTimeout and performance.now(), so `systemClock`
 * moves with them.
 */
import { GetItemCommand } from '@aws-sdk/client-dynamodb';
import { describe, expect, it } from '@jest/globals';
import { AcquireDeadline } from '../../src/acquire/acquire-deadline.js';
import { AcquireLoop } from '../../src/acquire/acquire-lock.js';
import { resolveAcquireOptions } from '../../src/acquire/acquire-options.js';
import { TAKEOVER_MARGIN_MS } from '../../src/acquire/stale-watch.js';
import { systemClock, type MonotonicClock } from '../../src/base/clock.js';
import type { LockTable } from '../../src/protocol/index.js';
import type { DynamoDBSender } from '../../src/settings/options.js';
import { unitAcquisitionParts } from '../../test-kit/acquisition-parts.js';
import { useFakeTime } from '../../test-kit/jest/fake-time.js';

const { advanceTo, at } = useFakeTime();

describe('AcquireDeadline', () => {
  it('passes after the wait, and cuts requests off a grace later', async () => {
    using deadline = new AcquireDeadline({ clock: systemClock, waitMs: 1_000, graceMs: 500 });
    await advanceTo(1_000);
    expect(deadline.passed).toBe(false);
    await advanceTo(1_001);
    expect(deadline.passed).toBe(true);
    await advanceTo(1_499);
    expect(deadline.cutOff).toBe(false);
    await advanceTo(1_500);
    expect(deadline.cutOff).toBe(true);
    expect(deadline.requestSignal.aborted).toBe(true);
    expect((deadline.requestSignal.reason as DOMException).name).toBe('TimeoutError');
  });

  it('adds the lease of the first holder seen, and no later one', async () => {
    using deadline = new AcquireDeadline({ clock: systemClock, waitMs: 1_000, graceMs: 500 });
    deadline.addHolderLease(2_000);
    deadline.addHolderLease(60_000);
    await advanceTo(3_000);
    expect(deadline.passed).toBe(false);
    await advanceTo(3_499);
    expect(deadline.cutOff).toBe(false);
    await advanceTo(3_500);
    expect(deadline.passed).toBe(true);
    expect(deadline.cutOff).toBe(true);
  });

  it("counts the holder's lease from when it was first seen once the wait has run out, so that the call never gives up before its takeover is due", async () => {
    using deadline = new AcquireDeadline({ clock: systemClock, waitMs: 0, graceMs: 500 });
    // The first read's answer came 30 ms into the call: the holder's RVN is timed from then, and taken over a lease and TAKEOVER_MARGIN_MS later.
    await advanceTo(30);
    deadline.addHolderLease(1_000);
    await advanceTo(1_030 + TAKEOVER_MARGIN_MS);
    expect(deadline.passed).toBe(false);
    await advanceTo(1_031 + TAKEOVER_MARGIN_MS);
    expect(deadline.passed).toBe(true);
    // Requests are still cut off a grace past Java's budget, the lease from the call's start.
    await advanceTo(1_499);
    expect(deadline.cutOff).toBe(false);
    await advanceTo(1_500);
    expect(deadline.cutOff).toBe(true);
  });

  it("keeps Java's budget, the wait plus the lease from the call's start, for a holder seen within the wait", async () => {
    using deadline = new AcquireDeadline({ clock: systemClock, waitMs: 1_000, graceMs: 500 });
    await advanceTo(900);
    deadline.addHolderLease(1_000);
    await advanceTo(2_000);
    expect(deadline.passed).toBe(false);
    await advanceTo(2_001);
    expect(deadline.passed).toBe(true);
  });

  it('does not count the time the call waits to be admitted by the gate against its wait', async () => {
    using deadline = new AcquireDeadline({ clock: systemClock, waitMs: 1_000, graceMs: 500 });
    await advanceTo(300);
    deadline.pause();
    await advanceTo(1_200);
    expect(deadline.passed).toBe(false);
    deadline.resume();
    expect(deadline.elapsed).toBeCloseTo(300, 0);
    await advanceTo(1_400);
    expect(deadline.passed).toBe(false);
    expect(deadline.remaining).toBeCloseTo(500, 0);
  });

  it('cuts off at its own time however long it waited for a turn, with a reason that says no slot came free', async () => {
    using deadline = new AcquireDeadline({ clock: systemClock, waitMs: 1_000, graceMs: 500 });
    await advanceTo(300);
    deadline.pause();
    await advanceTo(1_499);
    expect(deadline.cutOff).toBe(false);
    await advanceTo(1_500); // the wait and the grace from the call's start, queue or no queue
    expect(deadline.cutOff).toBe(true);
    expect((deadline.requestSignal.reason as DOMException).name).toBe('TimeoutError');
    expect((deadline.requestSignal.reason as DOMException).message).toMatch(/^no request slot came free for 1200 ms/);
  });

  it('is beyond its cut-off once the instant has passed, before its timer has run (a stalled process starts nothing late)', () => {
    let stalledMs = 0;
    using deadline = new AcquireDeadline({ clock: { now: () => performance.now() + stalledMs }, waitMs: 1_000, graceMs: 500 });
    stalledMs = 1_499;
    expect(deadline.beyondCutOff).toBe(false);
    stalledMs = 1_500;
    expect([deadline.beyondCutOff, deadline.cutOff, deadline.requestSignal.aborted]).toEqual([true, false, false]);
  });

  it('never cuts off a call that waits for ever', async () => {
    using deadline = new AcquireDeadline({ clock: systemClock, waitMs: Infinity, graceMs: 500 });
    deadline.addHolderLease(1_000);
    await advanceTo(10_000_000);
    expect(deadline.passed).toBe(false);
    expect(deadline.cutOff).toBe(false);
  });

  it("lets requests follow the caller's signal too", () => {
    const caller = new AbortController();
    using deadline = new AcquireDeadline({ clock: systemClock, waitMs: 1_000, graceMs: 500, signal: caller.signal });
    caller.abort(new Error('caller gave up'));
    expect(deadline.requestSignal.aborted).toBe(true);
    expect(deadline.cutOff).toBe(false);
  });

  it("leaves the caller's signal once disposed: a long-lived signal collects no listener per call", () => {
    const caller = new AbortController();
    const deadline = new AcquireDeadline({ clock: systemClock, waitMs: 1_000, graceMs: 500, signal: caller.signal });
    deadline[Symbol.dispose]();
    caller.abort(new Error('caller gave up'));
    expect(deadline.requestSignal.aborted).toBe(false);
  });

  describe('requests sent one at a time', () => {
    const unanswered = (signal: AbortSignal): Promise<never> =>
      new Promise((_, reject) => signal.addEventListener('abort', () => reject(new Error('aborted by the SDK')), { once: true }));

    it('abandons a request unanswered for its bound with a TimeoutError, and gives the next one a fresh signal', async () => {
      using deadline = new AcquireDeadline({ clock: systemClock, waitMs: 10_000, graceMs: 5_000, oneRequestAtATime: true });
      let first: AbortSignal | undefined;
      const abandoned = deadline.withinBound(300, (signal) => {
        first = signal;
        return unanswered(signal);
      });
      const settled = abandoned.catch((error: unknown) => error);
      await advanceTo(299);
      expect(first?.aborted).toBe(false);
      await advanceTo(300);
      const error = (await settled) as DOMException;
      expect(error.name).toBe('TimeoutError');
      expect(error.message).toBe('no answer within 300 ms: the request was abandoned');
      expect(deadline.cutOff).toBe(false);
      const next = await deadline.withinBound(300, async (signal) => signal);
      expect(next).not.toBe(first);
      expect(next.aborted).toBe(false);
      expect(deadline.requestSignal).toBe(next);
    });

    it("aborts the request in flight with the caller's signal, and its error is the SDK's, not a bound's", async () => {
      const caller = new AbortController();
      using deadline = new AcquireDeadline({
        clock: systemClock,
        waitMs: 10_000,
        graceMs: 5_000,
        signal: caller.signal,
        oneRequestAtATime: true,
      });
      const settled = deadline.withinBound(300, unanswered).catch((error: unknown) => error);
      caller.abort(new Error('caller gave up'));
      expect(((await settled) as Error).message).toBe('aborted by the SDK');
      await advanceTo(1_000);
      expect(deadline.requestSignal.aborted).toBe(true);
    });

    it('leaves no bound timer behind once the request is answered', async () => {
      using deadline = new AcquireDeadline({ clock: systemClock, waitMs: 10_000, graceMs: 5_000, oneRequestAtATime: true });
      let seen: AbortSignal | undefined;
      await deadline.withinBound(300, async (signal) => (seen = signal));
      await advanceTo(1_000);
      expect(seen?.aborted).toBe(false);
      expect(deadline.requestSignal).toBe(seen);
    });
  });
});

describe('AcquireDeadline in the acquire loop', () => {
  const table: LockTable = { tableName: 'locks', partitionKeyName: 'key' };
  const LEASE = 1_000;
  const READ_MS = 60;

  /** A DynamoDB whose every answer takes READ_MS, where a dead holder's item never changes; the times its writes were sent. */
  function deadHolderTable(writesSentAt: number[]): DynamoDBSender {
    const item = { key: { S: 'k' }, ownerName: { S: 'dead' }, leaseDuration: { S: String(LEASE) }, recordVersionNumber: { S: 'dead-rvn' } };
    return {
      send: (command) => {
        const read = command instanceof GetItemCommand;
        if (!read) writesSentAt.push(performance.now() - at(0));
        return new Promise((resolve) => setTimeout(() => resolve(read ? { Item: item } : {}), READ_MS));
      },
    };
  }

  it('takes over a dead holder with no wait beyond its lease, however late in the lease a poll lands', async () => {
    const writesSentAt: number[] = [];
    const ctx = unitAcquisitionParts({
      table,
      clock: systemClock,
      dynamoDB: deadHolderTable(writesSentAt),
      leaseDurationMs: LEASE,
      heartbeatPeriodMs: 100_000,
      polls: true,
      random: () => 0,
    });
    // The first read answers at 60 ms, so the RVN is stale from 1 061 ms; polls answer at 220, 320, … 1 020 ms,
    // after the call's start + lease but before the takeover is due.
    using loop = new AcquireLoop(
      ctx,
      { partitionKey: 'k' },
      resolveAcquireOptions(ctx, { additionalTimeToWaitForLock: 0, refreshPeriod: 100, acquireOnlyIfLockAlreadyExists: true }),
    );
    const taking = loop.run();
    const outcome = taking.then(
      () => 'taken',
      (error: unknown) => (error as Error).message,
    );
    await advanceTo(2_000);
    expect(await outcome).toBe('taken');
    expect(writesSentAt).toEqual([READ_MS + LEASE + TAKEOVER_MARGIN_MS]);
  });

  /** An error as the SDK throws it: its name, and the fields it carries. */
  const sdkError = (name: string, fields: object = {}): Error =>
    Object.assign(new Error(name), { name, $metadata: { httpStatusCode: 400 }, ...fields });

  /** Runs a loop with no wait on `dynamoDB` to the end of fake time; its outcome: 'taken', or the error's name and message. */
  async function runWithoutWait(
    dynamoDB: DynamoDBSender,
    clock: MonotonicClock,
    heartbeatPeriodMs: number,
    firstStep: 'read' | 'create' = 'read',
  ): Promise<string> {
    const ctx = unitAcquisitionParts({ table, clock, dynamoDB, leaseDurationMs: LEASE, heartbeatPeriodMs, polls: true, random: () => 0 });
    // A client that knows the table's key schema writes the new lock first; one told to take only an existing lock reads.
    if (firstStep === 'create') ctx.keySchema.confirm();
    using loop = new AcquireLoop(
      ctx,
      { partitionKey: 'k' },
      resolveAcquireOptions(ctx, { additionalTimeToWaitForLock: 0, refreshPeriod: 100, acquireOnlyIfLockAlreadyExists: firstStep === 'read' }),
    );
    const outcome = loop.run().then(
      () => 'taken',
      (error: unknown) => `${(error as Error).name}: ${(error as Error).message}`,
    );
    await advanceTo(3_000);
    return await outcome;
  }

  it('still takes over a lock that fell stale as the wait ran out, when a failed poll is handled first', async () => {
    // A process stalled for 50 ms while the poll answered at 1 020 ms failed: it handles that failure at
    // 1 070 ms on its clock, past both the takeover instant (1 061 ms) and the end of the wait (the same
    // instant, with no wait), before the takeover timer has had its turn. Java judges expiry first.
    let stalledMs = 0;
    const clock: MonotonicClock = { now: () => performance.now() + stalledMs };
    const writesSentAt: number[] = [];
    const deadHolder = deadHolderTable(writesSentAt);
    let reads = 0;
    const dynamoDB: DynamoDBSender = {
      send: (command) => {
        if (!(command instanceof GetItemCommand) || ++reads !== 10) return deadHolder.send(command);
        return new Promise((_, reject) =>
          setTimeout(() => {
            stalledMs = 50;
            reject(sdkError('ThrottlingException'));
          }, READ_MS),
        );
      },
    };
    expect(await runWithoutWait(dynamoDB, clock, 100_000)).toBe('taken');
    expect(writesSentAt).toEqual([1_020]);
  });

  /** The lock item of `owner`'s hold. */
  const itemOf = (owner: string): Record<string, { S: string }> => ({
    key: { S: 'k' },
    ownerName: { S: owner },
    leaseDuration: { S: String(LEASE) },
    recordVersionNumber: { S: `${owner}-rvn` },
  });

  /** A DynamoDB whose every answer takes READ_MS and is what `answer` gives for the command's name (an error is thrown); its writes, as `Command@ms`. */
  function scriptedTable(writes: string[], answer: (command: string) => object): DynamoDBSender {
    return {
      send: (command) => {
        const name = command.constructor.name;
        if (name !== 'GetItemCommand') writes.push(`${name}@${performance.now() - at(0)}`);
        return new Promise((resolve, reject) =>
          setTimeout(() => {
            const reply = answer(name);
            if (reply instanceof Error) reject(reply);
            else resolve(reply);
          }, READ_MS),
        );
      },
    };
  }

  it('tries that takeover once only: a late win whose renewal fails is handed over, not taken over again', async () => {
    // The takeover PutItem goes out at 1 061 ms and is answered 60 ms later, past a heartbeat period of 50 ms:
    // the win is renewed before it is handed over, the renewal is throttled, and the win stays the call's.
    const writes: string[] = [];
    const dynamoDB = scriptedTable(writes, (command) => {
      if (command === 'GetItemCommand') return { Item: itemOf('dead') };
      return command === 'PutItemCommand' ? {} : sdkError('ThrottlingException');
    });
    const outcome = await runWithoutWait(dynamoDB, systemClock, 50);
    expect(writes).toEqual(['PutItemCommand@1061', 'UpdateItemCommand@1121']);
    expect(outcome).toBe('taken');
  });

  // The poll answered at 1 020 ms is handled 50 ms late, past the takeover instant: its takeover is sent and
  // fails. Refused by a new holder, the RVN it timed is gone; failing with a 500, it may have been applied.
  // Either way this call has sent its takeover and its wait is over: it ends, and sends no second one.
  it.each([
    [
      'refused by a new holder',
      sdkError('ConditionalCheckFailedException', { Item: itemOf('other') }),
      /^LockNotGrantedError: .*held by "other"/,
    ],
    [
      'of its own whose outcome is unknown',
      sdkError('InternalServerError', { $metadata: { httpStatusCode: 500 } }),
      /^DynamoDBUnavailableError/,
    ],
  ])('does not send it again after a takeover %s', async (_, failure, ending) => {
    let stalledMs = 0;
    const clock: MonotonicClock = { now: () => performance.now() + stalledMs };
    const writes: string[] = [];
    let reads = 0;
    const dynamoDB = scriptedTable(writes, (command) => {
      if (command !== 'GetItemCommand') return failure;
      if (++reads === 10) stalledMs = 50;
      return { Item: itemOf('dead') };
    });
    const outcome = await runWithoutWait(dynamoDB, clock, 100_000);
    expect(writes).toEqual(['PutItemCommand@1020']);
    expect(outcome).toMatch(ending);
  });

  it('tries it also when the call began with the new-lock write, as a client that knows the key schema does', async () => {
    // The new-lock PutItem at 0 ms is refused and shows the dead holder at 60 ms; the poll answered at
    // 1 020 ms is throttled while the process stalls 50 ms, past the takeover instant (1 061 ms).
    let stalledMs = 0;
    const clock: MonotonicClock = { now: () => performance.now() + stalledMs };
    const writes: string[] = [];
    let reads = 0;
    const dynamoDB = scriptedTable(writes, (command) => {
      if (command === 'PutItemCommand') return writes.length === 1 ? sdkError('ConditionalCheckFailedException', { Item: itemOf('dead') }) : {};
      if (++reads !== 9) return { Item: itemOf('dead') };
      stalledMs = 50;
      return sdkError('ThrottlingException');
    });
    expect(await runWithoutWait(dynamoDB, clock, 100_000, 'create')).toBe('taken');
    expect(writes).toEqual(['PutItemCommand@0', 'PutItemCommand@1020']);
  });
});
