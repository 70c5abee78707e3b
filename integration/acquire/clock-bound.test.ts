/**
 * The bounded-clock takeover (client option `clockBound`) against DynamoDB
 * Local: a client with the option stamps every write of a lock with its
 * wall-clock time beside the RVN; a waiter with it takes at once a lock whose
 * stamp still names its RVN and is older than lease + 2 × maxSkew, and
 * otherwise watches the RVN as Java does. A Java client's heartbeat (its
 * recorded UpdateItem, replayed) changes the RVN without the stamp, voiding
 * it. Without the option nothing is stamped.
 */
import { describe, expect, it } from '@jest/globals';
import { PutItemCommand, UpdateItemCommand, type UpdateItemCommandInput } from '@aws-sdk/client-dynamodb';
import { randomUUID } from 'node:crypto';
import { LockCurrentlyUnavailableError, type Lock, type LockClient } from '../../src/index.js';
import { loadJavaScenarios } from '../../test-kit/java-fixtures.js';
import { recordedRequest } from '../../test-kit/java-items.js';
import { lockRequests, now, recording, rejectionOf, sleep, waitUntil, type RecordingDynamoDB } from '../../test-kit/test-locks.js';
import { useLockTestBed } from '../../test-kit/jest/lock-test-bed-hook.js';

const STAMP = 'rvnWrittenAt';
const HOUR = 3_600_000;
const SKEW = 100;

const bed = useLockTestBed('clock-bound');

function client(ownerName: string, clockBound: boolean, settings: { leaseDuration?: number; heartbeatPeriod?: number } = {}): LockClient {
  return bed.client({
    ownerName,
    leaseDuration: 1_000,
    heartbeatPeriod: 250,
    ...settings,
    ...(clockBound ? { clockBound: { maxSkew: SKEW } } : {}),
  });
}

/** The item a holder killed `ageMs` ago left, as its last stamped write made it. */
async function leftByKilledHolder(key: string, ageMs: number, leaseMs: number): Promise<string> {
  const rvn = randomUUID();
  await bed.raw.send(
    new PutItemCommand({
      TableName: bed.tableName,
      Item: {
        ...bed.key(key),
        ownerName: { S: 'killed' },
        leaseDuration: { S: String(leaseMs) },
        recordVersionNumber: { S: rvn },
        [STAMP]: { S: `${rvn} ${Date.now() - ageMs}` },
      },
    }),
  );
  return rvn;
}

/** The stamp on the item: the RVN it names and its time. */
/** The lock's stamp, with the RVN of the item read with it (heartbeats may change both between two reads). */
async function stampOf(key: string): Promise<{ rvn: string; at: number; itemRvn: string | undefined } | undefined> {
  const item = await bed.item(key);
  const text = item?.[STAMP]?.S;
  if (text === undefined) return undefined;
  const [rvn, at] = text.split(' ');
  return { rvn: rvn as string, at: Number(at), itemRvn: item?.['recordVersionNumber']?.S };
}

/** The first word of every PartiQL statement the recorder saw sent in a batch: INSERT, UPDATE. */
function statementsOf(recorder: RecordingDynamoDB): string[] {
  return recorder
    .named('BatchExecuteStatementCommand')
    .flatMap((command) => (command.input['Statements'] as { Statement: string }[]).map(({ Statement }) => Statement.split(' ')[0] ?? ''));
}

/**
 * Lone heartbeats take milliseconds on DynamoDB Local, so with one in flight at a time two rarely fall due
 * meanwhile: hold each longer than a period (250 ms here) until heartbeats went out together in a batch.
 */
async function untilHeartbeatsBatched(recorder: RecordingDynamoDB): Promise<void> {
  const batched = (): boolean => statementsOf(recorder).includes('UPDATE');
  recorder.hold = (command) => (command.name === 'UpdateItemCommand' && !batched() ? sleep(300) : undefined);
  await waitUntil('a batch of heartbeats', batched, { timeoutMs: 10_000 });
  recorder.hold = undefined;
}

describe('a lock left by a killed holder', () => {
  it('our own stamping holder stops after a heartbeat: once its stamp is older than lease + 2 × skew, a fresh client with the option takes it without waiting, one without must watch', async () => {
    // Killed after one heartbeat: it never writes again, and nothing is released.
    const holder = bed.client({ ownerName: 'holder', leaseDuration: 1_000, backgroundHeartbeats: false, clockBound: { maxSkew: SKEW } });
    const before = Date.now();
    const lock = await holder.acquireLock('killed');
    await plainHeartbeat(holder, lock);
    const stamp = await stampOf('killed');
    expect(stamp?.rvn).toBe(await bed.rvn('killed'));
    expect(stamp?.at).toBeGreaterThanOrEqual(before);
    expect(stamp?.at).toBeLessThanOrEqual(Date.now());
    await sleep(Math.max(0, (stamp?.at ?? 0) + 1_000 + 2 * SKEW + 50 - Date.now()));

    const javaRule = client('java-rule', false);
    expect(await rejectionOf(javaRule.acquireLock('killed', { shouldSkipBlockingWait: true }))).toBeInstanceOf(LockCurrentlyUnavailableError);

    const recorder = recording(bed.dynamoDBClient('bounded'));
    const bounded = bed.client(
      { ownerName: 'bounded', leaseDuration: 1_000, heartbeatPeriod: 250, clockBound: { maxSkew: SKEW } },
      recorder.dynamoDB,
    );
    const taken = await bounded.acquireLock('killed', { shouldSkipBlockingWait: true });
    expect(taken.ownerName).toBe('bounded');
    // The last PutItem: a takeover reply a heartbeat period late is followed by its renewal (an UpdateItem).
    const takeover = lockRequests(recorder)
      .filter((command) => command.name === 'PutItemCommand')
      .at(-1);
    expect(takeover?.input['ConditionExpression']).toBe('attribute_exists(#pk) AND #rvn = :rvn');
    expect((takeover?.input['ExpressionAttributeValues'] as Record<string, { S?: string }>)[':rvn']?.S).toBe(stamp?.rvn);
  }, 20_000);

  it('killed an hour ago, with a long lease: taken at once with the option, not within 2 s without it', async () => {
    const lease = 60_000;
    const rvn = await leftByKilledHolder('an-hour-ago', HOUR, lease);
    const settings = { leaseDuration: lease, heartbeatPeriod: 5_000 };

    const javaRule = client('java-rule', false, settings);
    const unbounded = await rejectionOf(javaRule.acquireLock('an-hour-ago', { signal: AbortSignal.timeout(2_000) }));
    expect(unbounded).toBeInstanceOf(DOMException);
    expect(await bed.rvn('an-hour-ago')).toBe(rvn);

    const lock = await client('bounded', true, settings).acquireLock('an-hour-ago', { signal: AbortSignal.timeout(5_000) });
    expect(lock.ownerName).toBe('bounded');
    const stamp = await stampOf('an-hour-ago');
    expect(stamp?.rvn).toBe(lock.recordVersionNumber);
  }, 20_000);
});

describe('clocks beyond the bound', () => {
  /** A clock whose wall reading is `offsetMs` off true time; its monotonic reading is true. */
  const offBy = (offsetMs: number) => ({ now: () => performance.now(), wallNow: () => Date.now() + offsetMs });

  /** A stamping holder with its wall clock off by `offsetMs` takes `key` and never heartbeats; a true waiter takes it over. Is the holder's lock still held then? */
  async function holderStillHeldAtTakeover(key: string, offsetMs: number): Promise<boolean> {
    const settings = { leaseDuration: 3_000, clockBound: { maxSkew: SKEW } };
    const holder = bed.client({ ownerName: 'holder', ...settings, backgroundHeartbeats: false, clock: offBy(offsetMs) });
    const lock = await holder.acquireLock(key);
    const waiter = bed.client({ ownerName: 'waiter', ...settings, heartbeatPeriod: 500 });
    const taken = await waiter.acquireLock(key, { additionalTimeToWaitForLock: 5_000 });
    const both = lock.isHeld() && taken.isHeld();
    await taken.release();
    return both;
  }

  it('a holder clock behind by more than the bound is the dangerous one: two holders; one ahead only delays the takeover', async () => {
    // Behind by 2.5 s, its stamp says the write is 2.5 s older than it is: taken at 0.7 s, held by its holder until 2.7 s.
    expect(await holderStillHeldAtTakeover('behind', -2_500)).toBe(true);
    // Ahead by 2.5 s, its stamp proves nothing before the lease has run out for Java's rule too.
    expect(await holderStillHeldAtTakeover('ahead', 2_500)).toBe(false);
  }, 30_000);
});

describe('groups', () => {
  it('acquireLocks takes a group whose one held key was left by a holder killed an hour ago at once with the option, not within 2 s without', async () => {
    const lease = 60_000;
    const settings = { leaseDuration: lease, heartbeatPeriod: 5_000 };
    await leftByKilledHolder('g-dead', HOUR, lease);
    const javaRule = client('java-rule', false, settings);
    expect(await rejectionOf(javaRule.acquireLocks(['g-free', 'g-dead'], { signal: AbortSignal.timeout(2_000) }))).toBeInstanceOf(DOMException);
    const group = await client('bounded', true, settings).acquireLocks(['g-free', 'g-dead'], { signal: AbortSignal.timeout(5_000) });
    expect(group.locks.map((lock) => lock.ownerName)).toEqual(['bounded', 'bounded']);
    expect((await stampOf('g-dead'))?.rvn).toBe(group.locks[1]?.recordVersionNumber);
  }, 20_000);
});

describe('stamps that prove nothing', () => {
  it('a Java heartbeat (its recorded UpdateItem, replayed) voids the stamp: the waiter falls back to watching the RVN for a lease', async () => {
    const lease = 2_000;
    const rvn = await leftByKilledHolder('java-beat', HOUR, lease);
    const template = recordedRequest(
      loadJavaScenarios().find((s) => s.scenario === 'heartbeat') ?? (undefined as never),
      'A',
      'UpdateItem',
      bed.tableName,
    );
    const javaRvn = randomUUID();
    await bed.raw.send(
      new UpdateItemCommand({
        ...(template as unknown as UpdateItemCommandInput),
        Key: bed.key('java-beat'),
        ExpressionAttributeValues: {
          ...template.ExpressionAttributeValues,
          ':rvn': { S: rvn },
          ':newRvn': { S: javaRvn },
          ':on': { S: 'killed' },
          ':ld': { S: String(lease) },
        },
      }),
    );
    // Java left the stamp as it was: it still names the RVN Java replaced.
    expect((await stampOf('java-beat'))?.rvn).toBe(rvn);
    expect(await bed.rvn('java-beat')).toBe(javaRvn);

    const waiter = client('bounded', true, { leaseDuration: lease, heartbeatPeriod: 500 });
    expect(await rejectionOf(waiter.acquireLock('java-beat', { shouldSkipBlockingWait: true }))).toBeInstanceOf(LockCurrentlyUnavailableError);
    const started = now();
    const lock = await waiter.acquireLock('java-beat');
    expect(now() - started).toBeGreaterThan(lease);
    expect(lock.ownerName).toBe('bounded');
  }, 20_000);

  it('a recent stamp is not taken, nor one older than lease + skew but not lease + 2 × skew', async () => {
    const lease = 60_000;
    const settings = { leaseDuration: lease, heartbeatPeriod: 5_000 };
    const maxSkew = 10_000;
    await leftByKilledHolder('recent', 1_000, lease);
    // Older than lease + maxSkew, with a margin for the time this test takes; younger than lease + 2 × maxSkew.
    await leftByKilledHolder('one-skew', lease + maxSkew + 1_000, lease);
    const waiter = bed.client({ ownerName: 'bounded', ...settings, clockBound: { maxSkew } });
    for (const key of ['recent', 'one-skew']) {
      expect(await rejectionOf(waiter.acquireLock(key, { shouldSkipBlockingWait: true }))).toBeInstanceOf(LockCurrentlyUnavailableError);
      expect(await bed.owner(key)).toBe('killed');
    }
  }, 20_000);
});

describe('who writes stamps', () => {
  it('without the option, no write carries a stamp: acquisitions, heartbeats alone and batched, a release that keeps the item', async () => {
    const recorder = recording(bed.dynamoDBClient('plain'));
    const plain = bed.client({ ownerName: 'plain', leaseDuration: 2_000, heartbeatPeriod: 250, heartbeatConcurrency: 1 }, recorder.dynamoDB);
    const locks = await plain.acquireLocks(['p-1', 'p-2']);
    // Five free locks asked for together: a batch of INSERTs.
    await Promise.all(['p-4', 'p-5', 'p-6', 'p-7', 'p-8'].map((key) => plain.acquireLock(key)));
    const single = await plain.acquireLock('p-3', { deleteLockOnRelease: false });
    const first = single.recordVersionNumber;
    await waitUntil('background heartbeats', () => single.recordVersionNumber !== first);
    await plain.sendHeartbeat(single, { data: new Uint8Array([1]) });
    await untilHeartbeatsBatched(recorder);
    await single.release();
    await locks.release();
    expect(statementsOf(recorder)).toContain('INSERT');
    expect(statementsOf(recorder)).toContain('UPDATE');
    expect(JSON.stringify(recorder.sent.map((command) => command.input))).not.toContain(STAMP);
    expect((await bed.item('p-3'))?.[STAMP]).toBeUndefined();
  }, 20_000);

  it('with the option, every write of a held lock leaves a stamp naming the RVN it wrote: single, batched and group acquisitions, heartbeats alone and batched', async () => {
    const recorder = recording(bed.dynamoDBClient('stamper'));
    const stamper = bed.client(
      // One heartbeat in flight at a time: those due meanwhile go out together in a batch.
      { ownerName: 'stamper', leaseDuration: 2_000, heartbeatPeriod: 250, heartbeatConcurrency: 1, clockBound: { maxSkew: SKEW } },
      recorder.dynamoDB,
    );
    // Every RVN each lock has had, by key: a heartbeat applied but not yet answered stamps an RVN its lock learns only with the answer.
    const had = new Map<string, Set<string>>();
    const note = (lock: Lock): void => void had.set(lock.partitionKey, (had.get(lock.partitionKey) ?? new Set()).add(lock.recordVersionNumber));
    stamper.on('heartbeat', ({ lock }) => note(lock));
    const before = Date.now();
    const group = await stamper.acquireLocks(['s-1', 's-2']);
    group.locks.forEach(note);
    // Five free locks asked for together: their new-lock writes go out as one batch of PartiQL INSERTs.
    const singles = await Promise.all(['s-3', 's-4', 's-5', 's-6', 's-7'].map((key) => stamper.acquireLock(key)));
    singles.forEach(note);
    for (const key of ['s-1', 's-3', 's-7']) {
      const stamp = await stampOf(key);
      await waitUntil(`the stamp of ${key} names an RVN of its lock`, () => stamp !== undefined && had.get(key)?.has(stamp.rvn) === true);
    }
    await plainHeartbeat(stamper, singles[1] as Lock);
    await untilHeartbeatsBatched(recorder);
    await sleep(300);
    for (const key of ['s-1', 's-2', 's-3', 's-4', 's-5', 's-6', 's-7']) {
      const stamp = await stampOf(key);
      expect(stamp?.rvn).toBe(stamp?.itemRvn);
      expect(stamp?.itemRvn).toBeDefined();
      expect(stamp?.at).toBeGreaterThanOrEqual(before);
      expect(stamp?.at).toBeLessThanOrEqual(Date.now());
    }
    expect(statementsOf(recorder)).toContain('INSERT');
    expect(statementsOf(recorder)).toContain('UPDATE');
    expect(JSON.stringify(recorder.named('BatchExecuteStatementCommand').map((command) => command.input))).toContain(STAMP);
  }, 20_000);
});

async function plainHeartbeat(client: LockClient, lock: Parameters<LockClient['sendHeartbeat']>[0]): Promise<void> {
  const before = lock.recordVersionNumber;
  await client.sendHeartbeat(lock);
  expect(lock.recordVersionNumber).not.toBe(before);
}
