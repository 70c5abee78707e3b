/**
 * Fencing tokens (client option `fencingTableName`) against DynamoDB Local:
 * every acquisition of a key by a fencing client gets a larger number than
 * all before it, stepped in the same transaction as the acquisition write,
 * also when that write's outcome was unknown; Java's acquisitions get none
 * and leave the counter alone; the lock table holds nothing new.
 */
import { describe, expect, it } from '@jest/globals';
import {
  DeleteItemCommand,
  GetItemCommand,
  PutItemCommand,
  ScanCommand,
  UpdateItemCommand,
  type DynamoDBClient,
  type PutItemCommandInput,
} from '@aws-sdk/client-dynamodb';
import { LockTableDoesNotExistError, type LockClient, type LockClientSettings } from '../src/index.js';
import { loadJavaScenarios } from '../test-kit/java-fixtures.js';
import { useFaultBed } from '../test-kit/jest/fault-bed.js';
import { operationOf, type ProxiedRequest } from '../test-kit/fault-proxy.js';
import { javaReadLockItem, recordedRequest } from '../test-kit/java-items.js';
import { recording, rejectionOf } from '../test-kit/test-locks.js';

const faults = useFaultBed('fencing');
const bed = faults.bed;
const scenarios = loadJavaScenarios();
const KEY = 'lock-1';

const fencingTable = (): string => `${bed.tableName}-fence`;
const isTransaction = (request: ProxiedRequest): boolean => operationOf(request) === 'TransactWriteItems';

function fencingClient(ownerName: string, dynamoDB?: Pick<DynamoDBClient, 'send'>, settings: Partial<LockClientSettings> = {}): LockClient {
  return bed.client({ ownerName, leaseDuration: 1_000, heartbeatPeriod: 250, fencingTableName: fencingTable(), ...settings }, dynamoDB);
}

async function withFencingTable(): Promise<void> {
  await fencingClient('table-creator').createFencingTable();
}

/** The counter as the fencing table holds it. */
async function storedToken(key = KEY): Promise<string | undefined> {
  const output = await bed.raw.send(new GetItemCommand({ TableName: fencingTable(), Key: { key: { S: key } }, ConsistentRead: true }));
  return output.Item?.['fencingToken']?.N;
}

describe('fencing tokens', () => {
  it('grow by one with every acquisition of a key by a fencing client, per key, and the lock table holds nothing new', async () => {
    await withFencingTable();
    const a = fencingClient('a');
    const b = fencingClient('b');
    const tokens: (bigint | undefined)[] = [];
    for (const client of [a, b, a, b]) {
      const lock = await client.acquireLock(KEY);
      tokens.push(lock.fencingToken);
      await lock.release();
    }
    expect(tokens).toEqual([1n, 2n, 3n, 4n]);
    expect((await a.acquireLock('other-key')).fencingToken).toBe(1n);
    expect(await storedToken()).toBe('4');

    // Only lock items in the lock table, each one Java reads cleanly.
    const { Items } = await bed.raw.send(new ScanCommand({ TableName: bed.tableName, ConsistentRead: true }));
    expect(Items?.map((item) => item['key']?.S)).toEqual(['other-key']);
    expect(() => javaReadLockItem(Items![0]!, 'key')).not.toThrow();
    const snapshots = [];
    for await (const snapshot of b.getAllLocks()) snapshots.push(snapshot.partitionKey);
    expect(snapshots).toEqual(['other-key']);
  });

  it('grow on the takeover of a lock whose holder stopped heartbeating', async () => {
    await withFencingTable();
    const dead = fencingClient('dead', undefined, { backgroundHeartbeats: false });
    expect((await dead.acquireLock(KEY)).fencingToken).toBe(1n);
    const taker = await fencingClient('taker').acquireLock(KEY, { refreshPeriod: 100, additionalTimeToWaitForLock: 5_000 });
    expect(taker.fencingToken).toBe(2n);
    expect(await storedToken()).toBe('2');
  });

  it('are not given to, and not moved by, a Java client’s acquisition', async () => {
    await withFencingTable();
    const ours = fencingClient('ours');
    const first = await ours.acquireLock(KEY);
    await first.release();

    // Java's own free-lock PutItem, then its release by delete.
    const javaPut = recordedRequest(
      scenarios.find((s) => s.scenario === 'acquire-free-lock')!,
      'A',
      'PutItem',
      bed.tableName,
    );
    await bed.raw.send(new PutItemCommand(javaPut as unknown as PutItemCommandInput));
    expect(await storedToken()).toBe('1');
    await bed.raw.send(new DeleteItemCommand({ TableName: bed.tableName, Key: { key: { S: KEY } } }));

    const next = await ours.acquireLock(KEY);
    expect([first.fencingToken, next.fencingToken]).toEqual([1n, 2n]);
  });

  it('are known for an acquisition whose reply was lost and which a read then showed applied, without a second step', async () => {
    await withFencingTable();
    // No SDK retry: the lost reply is an unknown outcome for the acquire loop itself to resolve.
    const network = await faults.proxied('lost-reply');
    const lost = network.proxy.dropNextReply(isTransaction);
    const lock = await fencingClient('lost-reply', network.dynamoDB).acquireLock(KEY, { refreshPeriod: 100 });
    const dropped = await lost;
    expect(dropped.swallowedStatusLine).toMatch(/^HTTP\/1\.1 200 /);
    expect(lock.fencingToken).toBe(1n);
    expect(await storedToken()).toBe('1');
    expect(network.proxy.exchanges.filter((e) => isTransaction(e.request))).toHaveLength(1);
  });

  it('are stepped once when the SDK retries an acquisition whose reply was lost', async () => {
    await withFencingTable();
    const network = await faults.proxied('sdk-retry', { sdkDefaults: true });
    const lost = network.proxy.loseReplyThenRetries(isTransaction, { action: 'forward' });
    const lock = await fencingClient('sdk-retry', network.dynamoDB).acquireLock(KEY);
    await lost;
    expect(network.proxy.exchanges.filter((e) => isTransaction(e.request)).length).toBeGreaterThanOrEqual(2);
    expect(lock.fencingToken).toBe(1n);
    expect(await storedToken()).toBe('1');
  });

  it("are stepped once when the SDK retries a bounded lock's acquisition whose reply was lost, the retry with a lease and a token of its own", async () => {
    await withFencingTable();
    const network = await faults.proxied('bounded-sdk-retry', { sdkDefaults: true });
    const lost = network.proxy.loseReplyThenRetries(isTransaction, { action: 'forward' });
    const client = fencingClient('bounded-sdk-retry', network.dynamoDB);
    const lock = await client.acquireLock(KEY, { invocationDeadline: { remainingMs: 5_000 } });
    await lost;
    const sent = network.proxy.exchanges
      .filter((e) => isTransaction(e.request))
      .map(
        (e) =>
          JSON.parse(e.request.body.toString('utf8')) as {
            ClientRequestToken: string;
            TransactItems: { Put?: { Item: Record<string, { S: string }> } }[];
          },
      );
    expect(sent.length).toBeGreaterThanOrEqual(2);
    // DynamoDB refuses a token reused with other parameters: the retry, whose lease was stated again, has its own.
    expect(new Set(sent.map((body) => body.ClientRequestToken)).size).toBe(sent.length);
    const leases = sent.map((body) => Number(body.TransactItems[0]?.Put?.Item['leaseDuration']?.S));
    expect(leases[1]).toBeLessThanOrEqual(leases[0] as number);
    expect(lock.isHeld()).toBe(true);
    expect(lock.fencingToken).toBe(1n);
    expect(await storedToken()).toBe('1');
  });

  it('follow a counter that moved between its read and the acquisition: that write is canceled and the next one gets the next number', async () => {
    await withFencingTable();
    const recorder = recording(bed.dynamoDBClient('raced'));
    let raced = false;
    // Right after the first read of the counter, another fencing client's acquisition and release (as the table shows them).
    recorder.hold = async (command) => {
      if (command.name !== 'TransactWriteItemsCommand' || raced) return;
      raced = true;
      await bed.raw.send(
        new UpdateItemCommand({
          TableName: fencingTable(),
          Key: { key: { S: KEY } },
          UpdateExpression: 'SET fencingToken = :five',
          ExpressionAttributeValues: { ':five': { N: '5' } },
        }),
      );
    };
    const lock = await fencingClient('raced', recorder.dynamoDB).acquireLock(KEY);
    expect(lock.fencingToken).toBe(6n);
    expect(await storedToken()).toBe('6');
    expect(recorder.named('TransactWriteItemsCommand')).toHaveLength(2);
  });

  it('need their table: without it, acquiring fails with LockTableDoesNotExistError naming it, and nothing is acquired', async () => {
    const error = await rejectionOf(fencingClient('no-table').acquireLock(KEY));
    expect(error).toBeInstanceOf(LockTableDoesNotExistError);
    expect((error as LockTableDoesNotExistError).tableName).toBe(fencingTable());
    expect(await bed.item(KEY)).toBeUndefined();
  });

  it('are absent without fencingTableName', async () => {
    const lock = await bed.client({ ownerName: 'plain', leaseDuration: 1_000, heartbeatPeriod: 250 }).acquireLock(KEY);
    expect(lock.fencingToken).toBeUndefined();
    expect(lock.toJSON()).not.toHaveProperty('fencingToken');
  });
});
