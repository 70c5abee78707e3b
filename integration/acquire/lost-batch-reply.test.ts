/**
 * A skip-wait acquisition whose new-lock write went out in a batch
 * (BatchExecuteStatement) whose reply was lost: DynamoDB applied it, and the
 * SDK's retry met the acquisition's own item (`DuplicateItem`, which carries
 * no item). The outcome is resolved as a lost PutItem reply's is: read before
 * calling the lock unavailable; the item this call wrote makes the lock its own.
 */
import type { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { describe, expect, it } from '@jest/globals';
import { useFaultBed } from '../../test-kit/jest/fault-bed.js';
import { within } from '../../test-kit/jest/lock-events.js';
import { operationOf, type ProxiedRequest } from '../../test-kit/fault-proxy.js';

// With a sort key the client reads before its first write, so the new-lock writes follow reads.
const faults = useFaultBed('lost-batch-reply', { sortKeyName: 'sort' });

const isBatch = (request: ProxiedRequest): boolean => operationOf(request) === 'BatchExecuteStatement';
const KEYS = Array.from({ length: 5 }, (_, i) => `lost-${i}`);

/**
 * Hands every GetItem reply over in one tick of the event loop once `reads`
 * of them have come, so that the writes decided on them go out in one batch.
 */
function readsAnsweredTogether(inner: DynamoDBClient, reads: number): Pick<DynamoDBClient, 'send'> {
  let arrived = 0;
  let allArrived!: () => void;
  const together = new Promise<void>((resolve) => (allArrived = resolve));
  return {
    send: async (command: { constructor: { name: string } }, options?: unknown) => {
      const output: unknown = await (inner.send as (c: unknown, o?: unknown) => Promise<unknown>)(command, options);
      if (command.constructor.name === 'GetItemCommand' && arrived < reads) {
        if (++arrived === reads) allArrived();
        await together;
      }
      return output;
    },
  } as Pick<DynamoDBClient, 'send'>;
}

describe('skip-wait acquisitions whose INSERT batch reply was lost', () => {
  it('tryAcquireLock resolves each call with the lock it wrote', async () => {
    const network = await faults.proxied('batcher', { sdkDefaults: true });
    const client = faults.bed.client({ ownerName: 'batcher' }, readsAnsweredTogether(network.dynamoDB, KEYS.length));
    const lost = network.proxy.dropNextReply(isBatch);

    const locks = await Promise.all(KEYS.map((key) => client.tryAcquireLock(key, { sortKey: 's', shouldSkipBlockingWait: true })));

    expect((await within(lost, 1_000, 'the lost batch reply')).swallowedStatusLine).toMatch(/^HTTP\/1\.1 200 /);
    expect(locks.map((lock) => lock?.ownerName)).toEqual(KEYS.map(() => 'batcher'));
    for (const [i, key] of KEYS.entries()) {
      expect(await faults.bed.rvn(key, 's')).toBe(locks[i]?.recordVersionNumber);
    }
  });
});
