/**
 * `TransactionConflictException`: DynamoDB's answer to a write on an item an
 * ongoing transaction holds (this library's own guarded writes put the lock
 * item in one). Nothing was applied and the transaction ends soon: it is
 * contention, so acquisitions wait and try again within their deadline, and
 * heartbeats retry within the lock's safe time. DynamoDB Local never answers
 * with it; the fault proxy does, in its place.
 */
import { describe, expect, it } from '@jest/globals';
import { useFaultBed } from '../test-kit/jest/fault-bed.js';
import { recordEvents, within } from '../test-kit/jest/lock-events.js';
import { dynamoDBErrorReply, operationOf, type ProxiedRequest } from '../test-kit/fault-proxy.js';
import { waitUntil } from '../test-kit/test-locks.js';

const faults = useFaultBed('tx-conflict');

const conflict = { action: 'respond', reply: dynamoDBErrorReply('TransactionConflictException') } as const;
const isPutItem = (request: ProxiedRequest): boolean => operationOf(request) === 'PutItem';
const isUpdateItem = (request: ProxiedRequest): boolean => operationOf(request) === 'UpdateItem';

describe('an acquisition write answered with TransactionConflictException', () => {
  it('acquireLock waits and tries again within its deadline', async () => {
    const network = await faults.proxied('acquirer', { sdkDefaults: true });
    const client = faults.bed.client({ ownerName: 'acquirer' }, network.dynamoDB);
    const answered = network.proxy.injectOnce(isPutItem, conflict);

    const lock = await client.acquireLock('conflicted', { refreshPeriod: 100, additionalTimeToWaitForLock: 5_000 });

    await answered;
    expect(lock.ownerName).toBe('acquirer');
    expect(await faults.bed.owner('conflicted')).toBe('acquirer');
  });

  it('tryAcquireLock tries again within its deadline: a free lock is taken', async () => {
    const network = await faults.proxied('trier', { sdkDefaults: true });
    const client = faults.bed.client({ ownerName: 'trier' }, network.dynamoDB);
    const answered = network.proxy.injectOnce(isPutItem, conflict);

    const lock = await client.tryAcquireLock('conflicted-try', { refreshPeriod: 100 });

    await answered;
    expect(lock?.ownerName).toBe('trier');
    expect(await faults.bed.owner('conflicted-try')).toBe('trier');
  });
});

describe('a heartbeat answered with TransactionConflictException', () => {
  it('is retried within the safe time: reported as willRetry, and the lock stays held', async () => {
    const network = await faults.proxied('holder', { sdkDefaults: true });
    const client = faults.bed.client({ ownerName: 'holder', leaseDuration: 3_000, heartbeatPeriod: 500 }, network.dynamoDB);
    const events = recordEvents(client);
    const lock = await client.acquireLock('held-in-conflict');

    await within(network.proxy.injectOnce(isUpdateItem, conflict), 5_000, 'a heartbeat meets a transaction');
    await waitUntil('a heartbeat is confirmed after the conflict', () => {
      const failedAt = events.of('heartbeatError', lock)[0]?.at;
      return failedAt !== undefined && events.of('heartbeat', lock).some((seen) => seen.at > failedAt);
    });

    expect(events.of('heartbeatError').map((seen) => [(seen.event.error as Error).name, seen.event.willRetry])).toEqual([
      ['TransactionConflictException', true],
    ]);
    expect(events.of('lost')).toEqual([]);
    expect(lock.state).toBe('held');
  });
});
