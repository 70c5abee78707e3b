/**
 * Taking over dead holders (PROTOCOL.md §4.5, §5.4, §5.5) and what the old
 * holder sees afterwards (§7.1, §7.3).
 */
import { describe, expect, it } from '@jest/globals';
import { LockCurrentlyUnavailableError, LockLostError, type Lock, type MonotonicClock } from '../../src/index.js';
import { PutItemCommand } from '@aws-sdk/client-dynamodb';
import { now, recording, rejectionOf, sleep, waitUntil, watch } from '../../test-kit/test-locks.js';
import { useLockTestBed } from '../../test-kit/jest/lock-test-bed-hook.js';
import { LIVE_LEASE_MS, STILL } from '../../test-kit/live-lease.js';

const LEASE = 1_000;
const HEARTBEAT = 250;
const REFRESH = 100;

const bed = useLockTestBed('lock-takeover');

describe('a holder killed with SIGKILL', () => {
  it('is taken over by a waiter about one lease later, with a write conditioned on its stale RVN', async () => {
    const lease = 1_500;
    const holder = bed.spawnHolder('victim', 'doomed-holder', lease, 300);
    try {
      const acquired = await holder.next('acquired');
      expect(await bed.owner('victim')).toBe('doomed-holder');
      expect(await bed.rvn('victim')).toBeDefined();

      const recorder = recording(bed.dynamoDBClient('survivor'));
      const waiter = bed.client({ ownerName: 'survivor', ...STILL }, recorder.dynamoDB);
      const waiting = watch(waiter.acquireLock('victim', { refreshPeriod: REFRESH, additionalTimeToWaitForLock: 20_000 }));

      // The holder keeps heartbeating while the waiter waits: no takeover before the kill.
      const mark = holder.events.length;
      await holder.next('heartbeat', mark);
      await holder.next('heartbeat', holder.events.length);
      await sleep(lease); // longer than one lease of waiting, with the RVN moving
      expect(waiting.settled()).toBe(false);
      expect(await bed.owner('victim')).toBe('doomed-holder');
      expect(await bed.rvn('victim')).not.toBe(acquired.rvn);

      const killedAt = now();
      expect(await holder.kill()).toBe('SIGKILL');
      // Read until two reads 400 ms apart agree: a heartbeat that was already on the wire has landed by then.
      let left = await bed.item('victim');
      for (let previous: string | undefined; left?.['recordVersionNumber']?.S !== previous;) {
        previous = left?.['recordVersionNumber']?.S;
        await sleep(400);
        left = await bed.item('victim');
      }
      const staleRvn = left?.['recordVersionNumber']?.S;
      expect(staleRvn).toBeDefined();
      expect(left?.['ownerName']).toEqual({ S: 'doomed-holder' });
      expect(waiting.settled()).toBe(false);

      const lock = await waiting.promise;

      expect(waiting.settledAt()).toBeGreaterThan(killedAt);
      expect(lock.ownerName).toBe('survivor');
      expect(lock.recordVersionNumber).not.toBe(staleRvn);
      const stored = await bed.item('victim');
      expect(stored?.['ownerName']).toEqual({ S: 'survivor' });
      expect(stored?.['recordVersionNumber']).toEqual({ S: lock.recordVersionNumber });
      expect(stored?.['leaseDuration']).toEqual({ S: String(STILL.leaseDuration) });
      expect(stored?.['isReleased']).toBeUndefined();

      // The winning write was the expired-lock takeover (C7), conditioned on the stale RVN.
      const puts = recorder.named('PutItemCommand');
      const takeover = puts[puts.length - 1]!;
      expect(takeover.input['ConditionExpression']).toBe('attribute_exists(#pk) AND #rvn = :rvn');
      expect(takeover.input['ExpressionAttributeValues']).toEqual({ ':rvn': { S: staleRvn } });
      expect(waiter.hasLock('victim')).toBe(true);
    } finally {
      await holder.kill();
    }
  }, 40_000);
});

describe('tryAcquireLock', () => {
  it('waits as acquireLock does, Java’s “try”: the holder’s lease plus the additional wait, taking over a holder that stopped', async () => {
    const live = bed.client({ ownerName: 'live', leaseDuration: LIVE_LEASE_MS, heartbeatPeriod: HEARTBEAT });
    const stopped = bed.client({ ownerName: 'stopped', leaseDuration: LEASE, heartbeatPeriod: HEARTBEAT, backgroundHeartbeats: false });
    const recorder = recording(bed.dynamoDBClient('trier'));
    const trier = bed.client({ ownerName: 'trier', leaseDuration: LEASE, heartbeatPeriod: HEARTBEAT }, recorder.dynamoDB);
    await live.acquireLock('kept');
    await stopped.acquireLock('left');

    // A holder that heartbeats: undefined, but only once a lease and the additional wait passed, reading all along.
    const started = now();
    expect(await trier.tryAcquireLock('kept', { refreshPeriod: REFRESH, additionalTimeToWaitForLock: 200 })).toBeUndefined();
    expect(now() - started).toBeGreaterThanOrEqual(LIVE_LEASE_MS + 200);
    expect(recorder.named('GetItemCommand').length).toBeGreaterThan(2);
    // A holder that stopped: its lock is taken over within the same call, after its lease.
    const taken = await trier.tryAcquireLock('left', { refreshPeriod: REFRESH });
    expect(taken?.ownerName).toBe('trier');
    expect(await bed.owner('left')).toBe('trier');
  }, 20_000);
});

describe('shouldSkipBlockingWait', () => {
  it('fails at once with LockCurrentlyUnavailableError while the lock is held; tryAcquireLock gives undefined', async () => {
    const holder = bed.client({ ownerName: 'busy', leaseDuration: LIVE_LEASE_MS, heartbeatPeriod: HEARTBEAT });
    const other = bed.client({ ownerName: 'impatient', leaseDuration: LEASE, heartbeatPeriod: HEARTBEAT });
    const lock = await holder.acquireLock('busy-key');

    // A refresh period and budget that would make any wait obvious: waiting would take the holder's lease plus 5 s,
    // far more than the 5 s allowed here for the client's first requests.
    const started = now();
    const error = await rejectionOf(
      other.acquireLock('busy-key', { shouldSkipBlockingWait: true, refreshPeriod: 5_000, additionalTimeToWaitForLock: 5_000 }),
    );
    expect(now() - started).toBeLessThan(5_000);
    expect(error).toBeInstanceOf(LockCurrentlyUnavailableError);
    expect((error as LockCurrentlyUnavailableError).partitionKey).toBe('busy-key');
    expect((error as LockCurrentlyUnavailableError).holder?.ownerName).toBe('busy');

    const tryStarted = now();
    expect(
      await other.tryAcquireLock('busy-key', { shouldSkipBlockingWait: true, refreshPeriod: 5_000, additionalTimeToWaitForLock: 5_000 }),
    ).toBeUndefined();
    expect(now() - tryStarted).toBeLessThan(5_000);
    expect(other.hasLock('busy-key')).toBe(false);
    expect(await bed.owner('busy-key')).toBe('busy');

    // A free key is simply acquired in skip mode.
    const free = await other.acquireLock('free-key', { shouldSkipBlockingWait: true });
    expect(free.ownerName).toBe('impatient');
    expect(lock.state).toBe('held');
  }, 20_000);

  it('repeated calls on the same client take over a holder that stopped heartbeating, only after its lease', async () => {
    const dead = bed.client({ ownerName: 'silent', leaseDuration: LEASE, heartbeatPeriod: HEARTBEAT, backgroundHeartbeats: false });
    const poller = bed.client({ ownerName: 'poller', leaseDuration: LEASE, heartbeatPeriod: HEARTBEAT });
    const deadLock = await dead.acquireLock('abandoned');
    const staleRvn = deadLock.recordVersionNumber;

    const firstCall = now();
    let refusals = 0;
    let lock: Lock | undefined;
    while (lock === undefined && now() - firstCall < 10 * LEASE) {
      lock = await poller.tryAcquireLock('abandoned', { shouldSkipBlockingWait: true });
      if (lock === undefined) {
        refusals++;
        await sleep(150);
      }
    }
    const acquiredAt = now();

    expect(lock).toBeDefined();
    // At least the first call is refused; when the machine stalls the next one past the lease, that one takes over.
    expect(refusals).toBeGreaterThanOrEqual(1);
    // The first call recorded the RVN after its own read; the takeover needs a whole lease after that.
    expect(acquiredAt - firstCall).toBeGreaterThanOrEqual(LEASE);
    expect(lock!.ownerName).toBe('poller');
    expect(lock!.recordVersionNumber).not.toBe(staleRvn);
    expect(await bed.owner('abandoned')).toBe('poller');
    expect(await bed.rvn('abandoned')).not.toBe(staleRvn);
    // The silent holder finds out when it next tries to heartbeat.
    await expect(dead.sendHeartbeat(deadLock)).rejects.toBeInstanceOf(LockLostError);
    expect(deadLock.state).toBe('lost');
  }, 20_000);

  it('a skip-wait caller that sees the RVN change keeps refusing: a heartbeating holder is never taken', async () => {
    const holder = bed.client({ ownerName: 'alive', leaseDuration: LIVE_LEASE_MS, heartbeatPeriod: HEARTBEAT });
    const poller = bed.client({ ownerName: 'skip-poller', leaseDuration: LEASE, heartbeatPeriod: HEARTBEAT });
    await holder.acquireLock('alive-key');
    const until = now() + LIVE_LEASE_MS + 1_000;
    while (now() < until) {
      await expect(poller.acquireLock('alive-key', { shouldSkipBlockingWait: true })).rejects.toBeInstanceOf(LockCurrentlyUnavailableError);
      await sleep(150);
    }
    expect(await bed.owner('alive-key')).toBe('alive');
  }, 20_000);
});

describe('a heartbeat on a lock that was taken over', () => {
  it('throws LockLostError once the lease lapsed and another client took it; state becomes lost; release returns false', async () => {
    const lapsing = bed.client({ ownerName: 'lapsing', leaseDuration: LEASE, heartbeatPeriod: HEARTBEAT, backgroundHeartbeats: false });
    const taker = bed.client({ ownerName: 'taker', ...STILL });
    const lock = await lapsing.acquireLock('lapsed');
    expect(lapsing.hasLock('lapsed')).toBe(true);

    const stolen = await taker.acquireLock('lapsed', { refreshPeriod: REFRESH, additionalTimeToWaitForLock: 5_000 });
    expect(stolen.ownerName).toBe('taker');
    const takerRvn = await bed.rvn('lapsed');
    expect(takerRvn).toBe(stolen.recordVersionNumber);

    const error = await rejectionOf(lapsing.sendHeartbeat(lock));
    expect(error).toBeInstanceOf(LockLostError);
    expect((error as LockLostError).partitionKey).toBe('lapsed');
    expect(lock.state).toBe('lost');
    expect(lock.isExpired()).toBe(true);
    expect(lapsing.hasLock('lapsed')).toBe(false);
    expect(await lapsing.releaseLock(lock)).toBe(false);
    expect(await lock.release()).toBe(false);
    // Nothing the old holder did touched the new holder's item.
    const stored = await bed.item('lapsed');
    expect(stored?.['ownerName']).toEqual({ S: 'taker' });
    expect(stored?.['recordVersionNumber']).toEqual({ S: stolen.recordVersionNumber });
    expect(stolen.state).toBe('held');
  }, 20_000);

  it('throws LockLostError from DynamoDB’s refusal when the old holder’s clock says it still holds it', async () => {
    // A clock that stands still: locally, the old holder's lease never runs out, so the
    // heartbeat goes to DynamoDB and is refused by the RVN/owner condition.
    const frozen: MonotonicClock = { now: () => 1_000_000 };
    const recorder = recording(bed.dynamoDBClient('frozen'));
    const frozenHolder = bed.client(
      { ownerName: 'frozen', leaseDuration: LEASE, heartbeatPeriod: HEARTBEAT, backgroundHeartbeats: false, clock: frozen },
      recorder.dynamoDB,
    );
    const taker = bed.client({ ownerName: 'taker', ...STILL });
    const lock = await frozenHolder.acquireLock('refused');

    const stolen = await taker.acquireLock('refused', { refreshPeriod: REFRESH, additionalTimeToWaitForLock: 5_000 });
    expect(lock.isExpired()).toBe(false);
    expect(frozenHolder.hasLock('refused')).toBe(true);

    const updatesBefore = recorder.named('UpdateItemCommand').length;
    const error = await rejectionOf(frozenHolder.sendHeartbeat(lock));
    expect(recorder.named('UpdateItemCommand').length).toBe(updatesBefore + 1);
    expect(error).toBeInstanceOf(LockLostError);
    expect(((error as LockLostError).cause as { name?: string } | undefined)?.name).toBe('ConditionalCheckFailedException');
    expect(lock.state).toBe('lost');
    expect(frozenHolder.hasLock('refused')).toBe(false);
    expect(await frozenHolder.releaseLock(lock)).toBe(false);
    expect(recorder.named('DeleteItemCommand')).toHaveLength(0);
    const stored = await bed.item('refused');
    expect(stored?.['ownerName']).toEqual({ S: 'taker' });
    expect(stored?.['recordVersionNumber']).toEqual({ S: stolen.recordVersionNumber });
  }, 20_000);

  it('background heartbeats notice a takeover by a peer (e.g. a Java client) and mark the lock lost', async () => {
    const holder = bed.client({ ownerName: 'overtaken', leaseDuration: LEASE, heartbeatPeriod: HEARTBEAT });
    const lock = await holder.acquireLock('overwritten');
    // What a peer's expired-lock takeover writes: a whole new item conditioned on the RVN it watched.
    // A heartbeat may land first; the peer then writes again on the RVN the holder has confirmed since.
    await waitUntil('the peer took the lock over', async () => {
      try {
        await bed.raw.send(
          new PutItemCommand({
            TableName: bed.tableName,
            Item: {
              key: { S: 'overwritten' },
              ownerName: { S: 'java-peer' },
              leaseDuration: { S: '20000' },
              recordVersionNumber: { S: '00000000-0000-4000-8000-000000000000' },
            },
            ConditionExpression: 'attribute_exists(#pk) AND #rvn = :rvn',
            ExpressionAttributeNames: { '#pk': 'key', '#rvn': 'recordVersionNumber' },
            ExpressionAttributeValues: { ':rvn': { S: lock.recordVersionNumber } },
          }),
        );
        return true;
      } catch (error) {
        if ((error as { name?: string }).name === 'ConditionalCheckFailedException') return false;
        throw error;
      }
    });
    await waitUntil('the holder noticed', () => lock.state === 'lost', { timeoutMs: 5 * HEARTBEAT + 2_000 });
    expect(holder.hasLock('overwritten')).toBe(false);
    expect(await holder.getLock('overwritten')).toMatchObject({ ownerName: 'java-peer' });
    expect(await lock.release()).toBe(false);
    expect(await bed.owner('overwritten')).toBe('java-peer');
    expect(await bed.rvn('overwritten')).toBe('00000000-0000-4000-8000-000000000000');
  }, 20_000);
});
