/**
 * `collectAbandoned` against DynamoDB Local: it deletes an item only once its
 * RVN stood still for its lease while the pass watched, and never the item
 * of a live holder, whichever client or language holds it.
 */
import { describe, expect, it } from '@jest/globals';
import { PutItemCommand, UpdateItemCommand } from '@aws-sdk/client-dynamodb';
import { randomUUID } from 'node:crypto';
import { LockClientClosedError, type AbandonedItemsReport, type LeftReason } from '../../src/index.js';
import { loadJavaScenarios } from '../../test-kit/java-fixtures.js';
import { javaHeartbeat, javaReleasedLockUpdate } from '../../test-kit/java-items.js';
import { useLockTestBed } from '../../test-kit/jest/lock-test-bed-hook.js';
import { markReleased, putForeignLock } from '../../test-kit/tamper.js';
import { recording, rejectionOf, sleep } from '../../test-kit/test-locks.js';
import { LIVE_LEASE_MS } from '../../test-kit/live-lease.js';

const LEASE_MS = 1_000;
const HEARTBEAT_MS = 200;
const scenarios = loadJavaScenarios();

const bed = useLockTestBed('gc');

/** The collecting client: its own identity, short leases so that its requests are bounded as the tests expect. */
const collector = (ownerName = 'collector') => bed.client({ ownerName, leaseDuration: LEASE_MS, heartbeatPeriod: HEARTBEAT_MS });

const deletedKeys = (report: AbandonedItemsReport): string[] => report.deleted.map((lock) => lock.partitionKey).sort();

/** Each item left, as `key: reason`. */
function leftReasons(report: AbandonedItemsReport): Record<string, LeftReason | 'error' | 'malformed'> {
  const reasons: Record<string, LeftReason | 'error' | 'malformed'> = {};
  for (const left of report.left) {
    const key = 'lock' in left ? left.lock.partitionKey : String(left.item['key']?.S);
    reasons[key] = left.reason;
  }
  return reasons;
}

/** A Java holder that heartbeats `partitionKey` with the recorded Java request until `stop()`. */
function javaHolder(partitionKey: string, rvn: string): { stop: () => Promise<number> } {
  let running = true;
  let beats = 0;
  const loop = (async () => {
    for (let held = rvn; running; beats++) {
      await sleep(HEARTBEAT_MS);
      const next = randomUUID();
      const at = { tableName: bed.tableName, partitionKey };
      await bed.raw.send(
        new UpdateItemCommand(javaHeartbeat(scenarios, at, { ownerName: 'java-host', leaseMs: LIVE_LEASE_MS, rvn: held }, next)),
      );
      held = next;
    }
  })();
  return {
    stop: async () => {
      running = false;
      await loop;
      return beats;
    },
  };
}

describe('collectAbandoned', () => {
  it('deletes abandoned items, held and released, once their RVN stood still for the lease, and reports them', async () => {
    await putForeignLock(bed, 'crashed-java', 'java-host', { leaseMs: LEASE_MS });
    await putForeignLock(bed, 'released', 'java-host', { leaseMs: LEASE_MS });
    await markReleased(bed, 'released');
    // A holder of this library that stopped heartbeating (hung, or its process gone).
    const hung = bed.client({ ownerName: 'hung', leaseDuration: LEASE_MS, heartbeatPeriod: HEARTBEAT_MS, backgroundHeartbeats: false });
    await hung.acquireLock('crashed-library');

    const started = performance.now();
    const report = await collector().collectAbandoned();

    expect(performance.now() - started).toBeGreaterThan(LEASE_MS);
    expect(deletedKeys(report)).toEqual(['crashed-java', 'crashed-library', 'released']);
    expect(report.deleted.find((lock) => lock.partitionKey === 'released')?.isReleased).toBe(true);
    expect(report.left).toEqual([]);
    expect(report.complete).toBe(true);
    for (const key of ['crashed-java', 'crashed-library', 'released']) expect(await bed.item(key)).toBeUndefined();
  });

  it('never deletes a live holder: its own lock, another client heartbeating, a Java holder heartbeating', async () => {
    const client = bed.client({ ownerName: 'collector', leaseDuration: LEASE_MS, heartbeatPeriod: HEARTBEAT_MS, backgroundHeartbeats: false });
    // Its own lock does not heartbeat here: only being its own keeps it.
    const own = await client.acquireLock('own');
    const other = bed.client({ ownerName: 'other', leaseDuration: LIVE_LEASE_MS, heartbeatPeriod: HEARTBEAT_MS });
    await other.acquireLock('other-client');
    const javaRvn = await putForeignLock(bed, 'java-held', 'java-host', { leaseMs: LIVE_LEASE_MS });
    const java = javaHolder('java-held', javaRvn);

    const report = await client.collectAbandoned();
    expect(await java.stop()).toBeGreaterThan(2);

    expect(report.deleted).toEqual([]);
    expect(leftReasons(report)).toEqual({ own: 'held-here', 'other-client': 'moved', 'java-held': 'moved' });
    expect(await bed.rvn('own')).toBe(own.recordVersionNumber);
    expect(await bed.owner('other-client')).toBe('other');
    expect(await bed.owner('java-held')).toBe('java-host');
    expect(other.hasLock('other-client')).toBe(true);
  });

  it('leaves a released item that a Java client acquires again with updateExistingLockRecord while it is watched', async () => {
    await putForeignLock(bed, 'reused', 'java-host', { leaseMs: LIVE_LEASE_MS });
    await markReleased(bed, 'reused');
    const pass = collector().collectAbandoned();
    await sleep(LIVE_LEASE_MS / 2); // midway between the pass's first read and its second
    const javaRvn = randomUUID();
    await bed.raw.send(new UpdateItemCommand(javaReleasedLockUpdate(scenarios, { tableName: bed.tableName, partitionKey: 'reused' }, javaRvn)));

    const report = await pass;
    expect(leftReasons(report)).toEqual({ reused: 'moved' });
    expect(await bed.rvn('reused')).toBe(javaRvn);
    expect((await bed.item('reused'))?.['isReleased']).toBeUndefined();
  });

  it('leaves an item that its holder released while it was watched as gone', async () => {
    const holder = bed.client({ ownerName: 'holder', leaseDuration: LIVE_LEASE_MS, heartbeatPeriod: HEARTBEAT_MS });
    const lock = await holder.acquireLock('released-meanwhile');
    const pass = collector().collectAbandoned();
    await sleep(LIVE_LEASE_MS / 2); // midway between the pass's first read and its second
    await lock.release();
    expect(leftReasons(await pass)).toEqual({ 'released-meanwhile': 'gone' });
  });

  it('with partitionKeyPrefix, judges only the items whose key starts with it', async () => {
    await putForeignLock(bed, 'jobs/a', 'java-host', { leaseMs: LEASE_MS });
    await putForeignLock(bed, 'jobs/b', 'java-host', { leaseMs: LEASE_MS });
    await putForeignLock(bed, 'reports/a', 'java-host', { leaseMs: LEASE_MS });

    const report = await collector().collectAbandoned({ partitionKeyPrefix: 'jobs/' });
    expect(deletedKeys(report)).toEqual(['jobs/a', 'jobs/b']);
    expect(report.left).toEqual([]);
    expect(await bed.owner('reports/a')).toBe('java-host');
  });

  it('bounded: leaves leases that outlast maxDuration or exceed maxLease unwatched, and deletes the rest within the bound', async () => {
    await putForeignLock(bed, 'short', 'java-host', { leaseMs: LEASE_MS });
    await putForeignLock(bed, 'longer-than-the-pass', 'java-host', { leaseMs: 6 * LEASE_MS });
    await putForeignLock(bed, 'over-the-cap', 'java-host', { leaseMs: 3_600_000 });

    // Far above the one-lease watch of 'short' plus its requests, and below the wait for 'longer-than-the-pass'.
    const maxDuration = 5 * LEASE_MS;
    const started = performance.now();
    const report = await collector().collectAbandoned({ maxDuration, maxLease: 60_000 });
    expect(performance.now() - started).toBeLessThan(maxDuration);
    expect(deletedKeys(report)).toEqual(['short']);
    expect(leftReasons(report)).toEqual({ 'longer-than-the-pass': 'lease-outlasts-pass', 'over-the-cap': 'lease-over-cap' });
    expect(await bed.owner('longer-than-the-pass')).toBe('java-host');
    expect(await bed.owner('over-the-cap')).toBe('java-host');
  });

  it('leaves an item whose holder heartbeats between the second read and the delete: the delete is refused (taken)', async () => {
    const rvn = await putForeignLock(bed, 'late-heartbeat', 'java-host', { leaseMs: LEASE_MS });
    const recorder = recording(bed.dynamoDBClient('collector'));
    const newRvn = randomUUID();
    recorder.hold = async (command) => {
      if (command.name !== 'DeleteItemCommand') return;
      const at = { tableName: bed.tableName, partitionKey: 'late-heartbeat' };
      await bed.raw.send(new UpdateItemCommand(javaHeartbeat(scenarios, at, { ownerName: 'java-host', leaseMs: LEASE_MS, rvn }, newRvn)));
    };
    const client = bed.client({ ownerName: 'collector', leaseDuration: LEASE_MS, heartbeatPeriod: HEARTBEAT_MS }, recorder.dynamoDB);

    const report = await client.collectAbandoned();
    expect(recorder.named('DeleteItemCommand')).toHaveLength(1);
    expect(leftReasons(report)).toEqual({ 'late-heartbeat': 'taken' });
    expect(await bed.rvn('late-heartbeat')).toBe(newRvn);
  });

  it('dryRun: watches as usual and deletes nothing', async () => {
    await putForeignLock(bed, 'abandoned', 'java-host', { leaseMs: LEASE_MS });
    const report = await collector().collectAbandoned({ dryRun: true });
    expect(leftReasons(report)).toEqual({ abandoned: 'dry-run' });
    expect(await bed.owner('abandoned')).toBe('java-host');
  });

  it('leaves a malformed item as it is, and goes on past it', async () => {
    await bed.raw.send(
      new PutItemCommand({ TableName: bed.tableName, Item: { key: { S: 'no-rvn' }, ownerName: { S: 'x' }, leaseDuration: { S: '1000' } } }),
    );
    await putForeignLock(bed, 'abandoned', 'java-host', { leaseMs: LEASE_MS });
    const report = await collector().collectAbandoned();
    expect(deletedKeys(report)).toEqual(['abandoned']);
    expect(leftReasons(report)).toEqual({ 'no-rvn': 'malformed' });
    expect(await bed.item('no-rvn')).toBeDefined();
  });

  it('ends with the reason of its signal, or LockClientClosedError when the client closes, deleting nothing', async () => {
    await putForeignLock(bed, 'abandoned', 'java-host', { leaseMs: LEASE_MS });
    const client = collector();
    const reason = new Error('stop');
    expect(await rejectionOf(client.collectAbandoned({ signal: AbortSignal.abort(reason) }))).toBe(reason);
    const controller = new AbortController();
    const aborted = client.collectAbandoned({ signal: controller.signal });
    await sleep(LEASE_MS / 2);
    controller.abort(reason);
    expect(await rejectionOf(aborted)).toBe(reason);

    const closing = client.collectAbandoned();
    await sleep(LEASE_MS / 2);
    await client.close();
    expect(await rejectionOf(closing)).toBeInstanceOf(LockClientClosedError);
    expect(await rejectionOf(client.collectAbandoned())).toBeInstanceOf(LockClientClosedError);
    expect(await bed.owner('abandoned')).toBe('java-host');
  });
});
