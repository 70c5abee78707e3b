/**
 * A semaphore's permits from outside the library: the recorded Java
 * client's acquisition of a permit's key, counted as a permit taken and
 * recovered once its holder stops; and the CLI's list and release --force
 * on a permit, which work on it as on any lock.
 */
import { describe, expect, it } from '@jest/globals';
import { PutItemCommand, UpdateItemCommand, type PutItemCommandInput } from '@aws-sdk/client-dynamodb';
import { randomUUID } from 'node:crypto';
import { LockCurrentlyUnavailableError, LockNotGrantedError, type LockClient } from '../../src/index.js';
import type { Item } from '../../test-kit/aws.js';
import { localEndpoint } from '../../test-kit/aws.js';
import { runCli } from '../../test-kit/cli-process.js';
import { loadJavaScenarios } from '../../test-kit/java-fixtures.js';
import { javaHeartbeat, recordedRequest } from '../../test-kit/java-items.js';
import { useLockTestBed } from '../../test-kit/jest/lock-test-bed-hook.js';
import { putForeignLock } from '../../test-kit/tamper.js';
import { now, rejectionOf, sleep } from '../../test-kit/test-locks.js';

const LEASE_MS = 2_000;
const HEARTBEAT_MS = 400;
const REFRESH_MS = 100;
// The leases of live holders in this jest worker, whose permits a waiter beside them must never recover: a loaded
// CI machine can stall the worker for over a second, and CLI processes start meanwhile.
const LIVE_LEASE_MS = 6_000;
const JAVA_LIVE_LEASE_MS = 3_000;
const scenarios = loadJavaScenarios();

const bed = useLockTestBed('semaphore-joiners');

const worker = (ownerName: string): LockClient => bed.client({ ownerName, leaseDuration: LIVE_LEASE_MS, heartbeatPeriod: HEARTBEAT_MS });

/**
 * The Java client's acquisition of a free lock, exactly as recorded (owner-A's PutItem in
 * `acquire-free-lock`: condition `attribute_not_exists`), on `partitionKey`, with a lease of `leaseMs`.
 * @returns the RVN it wrote.
 */
async function javaTakes(partitionKey: string, leaseMs: number): Promise<string> {
  const scenario = scenarios.find((s) => s.scenario === 'acquire-free-lock');
  if (scenario === undefined) throw new Error('no Java fixture scenario "acquire-free-lock"');
  const template = recordedRequest(scenario, 'A', 'PutItem', bed.tableName);
  const rvn = randomUUID();
  const item: Item = {
    ...(template.Item as Item),
    key: { S: partitionKey },
    ownerName: { S: 'java-host' },
    leaseDuration: { S: String(leaseMs) },
    recordVersionNumber: { S: rvn },
  };
  await bed.raw.send(new PutItemCommand({ ...(template as unknown as PutItemCommandInput), Item: item }));
  return rvn;
}

describe('a Java client joining a semaphore', () => {
  it('takes a permit by its key with its own request; the semaphore counts it taken, and recovers it once Java stops', async () => {
    await javaTakes('shared#permit-1', LEASE_MS);
    const ours = await worker('ours').acquirePermit('shared', { permits: 2, refreshPeriod: REFRESH_MS });
    expect(ours.partitionKey).toBe('shared#permit-2');

    const late = worker('late');
    const refusal = await rejectionOf(late.acquirePermit('shared', { permits: 2, shouldSkipBlockingWait: true, refreshPeriod: REFRESH_MS }));
    expect(refusal).toBeInstanceOf(LockCurrentlyUnavailableError);
    expect(await bed.owner('shared#permit-1')).toBe('java-host');

    // Java stops heartbeating: its RVN stands still for its lease, and the permit is recovered.
    const started = now();
    const recovered = await late.acquirePermit('shared', { permits: 2, refreshPeriod: REFRESH_MS, additionalTimeToWaitForLock: 5_000 });
    expect(recovered.partitionKey).toBe('shared#permit-1');
    expect(now() - started).toBeGreaterThan(LEASE_MS);
    expect(ours.isHeld()).toBe(true);
  });

  it('keeps its permit while it heartbeats with its own requests', async () => {
    let rvn = await javaTakes('busy#permit-1', JAVA_LIVE_LEASE_MS);
    const waiter = worker('waiter');
    const waiting = rejectionOf(waiter.acquirePermit('busy', { permits: 1, refreshPeriod: REFRESH_MS, additionalTimeToWaitForLock: 1_000 }));
    // Heartbeats until a second after the waiter gave up (its wait: Java's lease and a second more).
    const endsAt = now() + JAVA_LIVE_LEASE_MS + 2_000;
    while (now() < endsAt) {
      await sleep(HEARTBEAT_MS);
      const next = randomUUID();
      const at = { tableName: bed.tableName, partitionKey: 'busy#permit-1' };
      await bed.raw.send(
        new UpdateItemCommand(javaHeartbeat(scenarios, at, { ownerName: 'java-host', leaseMs: JAVA_LIVE_LEASE_MS, rvn }, next)),
      );
      rvn = next;
    }
    expect(await waiting).toBeInstanceOf(LockNotGrantedError);
    expect(await bed.owner('busy#permit-1')).toBe('java-host');
  });
});

describe('the CLI on permits', () => {
  const connection = (): string[] => ['--endpoint', localEndpoint(), '--table', bed.tableName];

  it('lists permits as locks, and release --force frees a stopped holder’s permit for a waiter at once', async () => {
    const holder = worker('holder');
    const kept = await holder.acquirePermit('ops', { permits: 2 });
    const dead = kept.partitionKey === 'ops#permit-1' ? 'ops#permit-2' : 'ops#permit-1';
    const rvn = await putForeignLock(bed, dead, 'dead-host', { leaseMs: 3_600_000 });

    const listed = await runCli(['list', ...connection(), '--json']);
    expect(listed.code).toBe(0);
    const locks = JSON.parse(listed.stdout) as { partitionKey: string; ownerName: string }[];
    const owners = locks.map(({ partitionKey, ownerName }) => `${partitionKey} ${ownerName}`);
    expect(owners.sort()).toEqual([`${kept.partitionKey} holder`, `${dead} dead-host`].sort());

    const waiter = worker('waiter');
    const waiting = waiter.acquirePermit('ops', { permits: 2, refreshPeriod: REFRESH_MS, additionalTimeToWaitForLock: 60_000 });
    const released = await runCli(['release', ...connection(), dead, '--force', '--yes', '--now', '--json']);
    expect(released.code).toBe(0);
    expect(JSON.parse(released.stdout)).toMatchObject({ released: true, lock: { recordVersionNumber: rvn } });
    const permit = await waiting;
    expect(permit.partitionKey).toBe(dead);
    expect(kept.isHeld()).toBe(true);
  });
});
