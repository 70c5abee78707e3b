/**
 * Before its first listing a client checks the table's key schema with
 * DescribeTable (a Scan through the wrong key names would mis-decode). That
 * check is a request of ours like any other: the caller's signal ends the
 * wait for it, it is abandoned when unanswered for a lease, and one that
 * could not be made is tried again at the next listing. Clients here are
 * built as README builds them: the SDK's own retries on, no request timeout.
 */
import { describe, expect, it } from '@jest/globals';
import { isDynamoDBLockError, LockClientClosedError, LockTableSchemaMismatchError, type Logger } from '../src/index.js';
import { dynamoDBErrorReply, operationOf, type FaultProxy, type RequestFault } from '../test-kit/fault-proxy.js';
import { useFaultBed } from '../test-kit/jest/fault-bed.js';
import { within } from '../test-kit/jest/lock-events.js';
import { rejectionOf, waitUntil } from '../test-kit/test-locks.js';

// The bed's table has a partition key only.
const faults = useFaultBed('listing-check');

/** Every item of a listing, or the error it ends with. */
async function drain(listing: AsyncIterable<unknown>): Promise<unknown[]> {
  const items: unknown[] = [];
  for await (const item of listing) items.push(item);
  return items;
}

/** `fault` for every DescribeTable; everything else reaches DynamoDB Local. */
function onDescribeTable(proxy: FaultProxy, fault: RequestFault): void {
  proxy.setRule((request) => (operationOf(request) === 'DescribeTable' ? fault : { action: 'forward' }));
}

const describeTablesSent = (proxy: FaultProxy): number =>
  proxy.exchanges.filter((exchange) => operationOf(exchange.request) === 'DescribeTable').length;

function debugLogger(): { logger: Logger; debugged: Array<{ details: object; message: string }> } {
  const debugged: Array<{ details: object; message: string }> = [];
  const ignore = (): void => undefined;
  return { logger: { debug: (details, message) => debugged.push({ details, message }), warn: ignore, error: ignore }, debugged };
}

describe('the key schema check before a listing', () => {
  it("ends the caller's wait when the caller's signal aborts, with the caller's reason", async () => {
    const network = await faults.proxied('giving-up', { sdkDefaults: true });
    // A long lease: only the caller's signal can end these calls within the test's limits.
    const client = faults.bed.client({ ownerName: 'giving-up', leaseDuration: 20_000, heartbeatPeriod: 5_000 }, network.dynamoDB);
    onDescribeTable(network.proxy, { action: 'blackhole' });

    const errors = await within(
      Promise.all([
        rejectionOf(drain(client.getAllLocks({ signal: AbortSignal.timeout(500) }))),
        rejectionOf(drain(client.getLocksByPartitionKey('job', { signal: AbortSignal.timeout(500) }))),
        rejectionOf(drain(client.getAllLocks({ signal: AbortSignal.abort(new Error('given up before calling')) }))),
      ]),
      5_000,
      'the aborted listings end',
    );

    expect(errors[0]).toMatchObject({ name: 'TimeoutError' }); // AbortSignal.timeout's own reason
    expect(errors[1]).toMatchObject({ name: 'TimeoutError' });
    expect(isDynamoDBLockError(errors[0])).toBe(false);
    expect(errors[2]).toMatchObject({ message: 'given up before calling' });
  }, 30_000);

  it('runs on for the callers still waiting when one of them aborts', async () => {
    const network = await faults.proxied('sharing', { sdkDefaults: true });
    // Configured with a sort key the table does not have: the check, once answered, refuses the listings.
    const client = faults.bed.client(
      { ownerName: 'sharing', sortKeyName: 'sortKey', leaseDuration: 20_000, heartbeatPeriod: 5_000 },
      network.dynamoDB,
    );
    onDescribeTable(network.proxy, { action: 'forward', delayMs: 1_500 });

    const [aborted, waited] = await within(
      Promise.all([
        rejectionOf(drain(client.getAllLocks({ signal: AbortSignal.timeout(300) }))),
        rejectionOf(drain(client.getLocksByPartitionKey('job'))),
      ]),
      10_000,
      'both listings end',
    );

    expect(aborted).toMatchObject({ name: 'TimeoutError' });
    expect(waited).toBeInstanceOf(LockTableSchemaMismatchError);
    expect(describeTablesSent(network.proxy)).toBe(1); // one check, shared
  }, 30_000);

  it('ends with LockClientClosedError when the client closes while it waits', async () => {
    const network = await faults.proxied('closing', { sdkDefaults: true });
    const client = faults.bed.client({ ownerName: 'closing', leaseDuration: 20_000, heartbeatPeriod: 5_000 }, network.dynamoDB);
    onDescribeTable(network.proxy, { action: 'blackhole' });

    const listing = rejectionOf(drain(client.getAllLocks()));
    await waitUntil('the check was sent', () => describeTablesSent(network.proxy) === 1);
    await client.close();

    expect(await within(listing, 5_000, 'the listing ends')).toBeInstanceOf(LockClientClosedError);
  }, 30_000);

  it.each<[string, RequestFault]>([
    ['unanswered: abandoned after a lease', { action: 'blackhole' }],
    ['throttled on every attempt', { action: 'respond', reply: dynamoDBErrorReply('ThrottlingException') }],
  ])(
    'that could not be made (%s) lets the listing go on, and the next listing checks again',
    async (_, fault) => {
      const network = await faults.proxied('unchecked', { sdkDefaults: true });
      const { logger, debugged } = debugLogger();
      const client = faults.bed.client(
        { ownerName: 'unchecked', sortKeyName: 'sortKey', leaseDuration: 1_500, heartbeatPeriod: 300, logger },
        network.dynamoDB,
      );
      onDescribeTable(network.proxy, fault);

      // The table is empty: a listing that goes on finds nothing.
      await expect(within(drain(client.getAllLocks()), 10_000, 'the listing ends')).resolves.toEqual([]);
      expect(debugged.map(({ message }) => message)).toEqual([expect.stringMatching(/could not check the lock table key schema/)]);

      network.proxy.passThrough();
      expect(await rejectionOf(drain(client.getAllLocks()))).toBeInstanceOf(LockTableSchemaMismatchError);
    },
    30_000,
  );

  it('without DescribeTable permission is skipped for the life of the client', async () => {
    const network = await faults.proxied('denied', { sdkDefaults: true });
    const { logger, debugged } = debugLogger();
    const client = faults.bed.client({ ownerName: 'denied', sortKeyName: 'sortKey', logger }, network.dynamoDB);
    onDescribeTable(network.proxy, { action: 'respond', reply: dynamoDBErrorReply('AccessDeniedException') });

    await expect(drain(client.getAllLocks())).resolves.toEqual([]);
    await expect(drain(client.getLocksByPartitionKey('job'))).resolves.toEqual([]);

    expect(describeTablesSent(network.proxy)).toBe(1); // the permission will not appear by itself
    expect(debugged).toHaveLength(1);
    expect(debugged[0]?.details).toMatchObject({ err: { cause: { name: 'AccessDeniedException' } } });
  }, 30_000);
});
