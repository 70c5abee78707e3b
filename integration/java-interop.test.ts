/**
 * Java ⇄ us against a real DynamoDB Local, from the recordings of the real
 * Java `AmazonDynamoDBLockClient` (test/fixtures/java-lock-client):
 *
 * - Java → us: every item the Java client left in a table (`final_items` of
 *   every scenario file) is written raw into a fresh table and read back with
 *   getLock / getAllLocks / getLocksByPartitionKey; a Java-held item is taken
 *   over only after its stored lease, a Java-released one at once, with the
 *   conditional writes Java itself sends.
 * - us → Java: the items we write have exactly the attribute names and types
 *   of the Java client's items, read cleanly under Java's rules
 *   (test-kit/java-items.ts), and Java's own recorded takeover
 *   requests, replayed against them, are accepted by DynamoDB.
 */
import { afterEach, describe, expect, test } from '@jest/globals';
import {
  PutItemCommand,
  ScanCommand,
  UpdateItemCommand,
  type DynamoDBClient,
  type PutItemCommandInput,
  type UpdateItemCommandInput,
} from '@aws-sdk/client-dynamodb';
import { randomUUID } from 'node:crypto';
import { LockClient, LockNotGrantedError, LockSnapshot, type Lock, type LockClientSettings } from '../src/index.js';
import { fromWireItem, utf8Bytes, type WireItem } from '../test-kit/dynamodb-json.js';
import { loadJavaScenarios, type JavaScenario } from '../test-kit/java-fixtures.js';
import { newLocalClient, readItem, uniqueTableName, type Item } from '../test-kit/aws.js';
import {
  JAVA_LEASE,
  JAVA_UUID,
  attributeTypes,
  finalItemByKey,
  javaReadLockItem,
  onlyFinalItem,
  recordedRequest,
  wireAttributeTypes,
} from '../test-kit/java-items.js';
import { lockRequests, recording, rejectionOf, sleep, waitUntil, type RecordingDynamoDB } from '../test-kit/test-locks.js';

const scenarios = loadJavaScenarios();
const scenario = (name: string): JavaScenario => {
  const found = scenarios.find((s) => s.scenario === name);
  if (found === undefined) throw new Error(`no Java fixture scenario ${JSON.stringify(name)}`);
  return found;
};

const b64 = (bytes: Uint8Array | undefined): string | undefined => (bytes === undefined ? undefined : Buffer.from(bytes).toString('base64'));
const WRITES = ['PutItemCommand', 'UpdateItemCommand', 'DeleteItemCommand'];

/**
 * Our acquisitions send the new-lock PutItem (C1/C2, Java's own request)
 * before any read; it can only create a missing item, and when the lock
 * exists its refusal returns the item, standing in for Java's read. The
 * tests compare the writes after it with Java's.
 */
const isNewLockPut = (command: { name: string; input: Record<string, unknown> }): boolean =>
  command.name === 'PutItemCommand' && String(command.input['ConditionExpression']).startsWith('attribute_not_exists(#pk)');
const writesAfterNewLockPut = (recorder: RecordingDynamoDB) =>
  recorder.sent.filter((command) => WRITES.includes(command.name) && !isNewLockPut(command));

// ── Per-test resources ──────────────────────────────────────────────────────

let opened: { clients: LockClient[]; dynamoDB: DynamoDBClient[]; stoppers: Array<() => Promise<unknown>> } = {
  clients: [],
  dynamoDB: [],
  stoppers: [],
};

afterEach(async () => {
  const { clients, dynamoDB, stoppers } = opened;
  opened = { clients: [], dynamoDB: [], stoppers: [] };
  await Promise.allSettled(stoppers.map((stop) => stop()));
  await Promise.allSettled(clients.map((client) => client.close()));
  for (const client of dynamoDB) client.destroy();
});

function dynamoDBClient(): DynamoDBClient {
  const client = newLocalClient();
  opened.dynamoDB.push(client);
  return client;
}

interface Table {
  readonly tableName: string;
  readonly partitionKeyName: string;
  readonly sortKeyName: string | undefined;
  readonly raw: DynamoDBClient;
}

/** A fresh, empty lock table with the key names of `keys` (a scenario's table). */
async function freshTable(prefix: string, keys: { partitionKey: string; sortKey: string | null }): Promise<Table> {
  const table: Table = {
    tableName: uniqueTableName(`java-${prefix}`),
    partitionKeyName: keys.partitionKey,
    sortKeyName: keys.sortKey ?? undefined,
    raw: dynamoDBClient(),
  };
  await ourClient(table, { ownerName: 'table-creator' }).client.createLockTable();
  return table;
}

/** Our lock client on `table`, recording its requests. */
function ourClient(table: Table, settings: Partial<LockClientSettings> = {}): { client: LockClient; recorder: RecordingDynamoDB } {
  const recorder = recording(dynamoDBClient());
  const client = new LockClient({
    tableName: table.tableName,
    partitionKeyName: table.partitionKeyName,
    sortKeyName: table.sortKeyName,
    ownerName: `ts-${randomUUID()}`,
    leaseDuration: 2_000,
    heartbeatPeriod: 500,
    ...settings,
    dynamoDB: recorder.dynamoDB,
  });
  opened.clients.push(client);
  return { client, recorder };
}

const keyOf = (table: Table, partitionKey: string, sortKey?: string): Item => ({
  [table.partitionKeyName]: { S: partitionKey },
  ...(table.sortKeyName === undefined || sortKey === undefined ? {} : { [table.sortKeyName]: { S: sortKey } }),
});

async function putRaw(table: Table, item: Item): Promise<void> {
  await table.raw.send(new PutItemCommand({ TableName: table.tableName, Item: item }));
}

async function getRaw(table: Table, partitionKey: string, sortKey?: string): Promise<Item | undefined> {
  return readItem(table.raw, table.tableName, keyOf(table, partitionKey, sortKey));
}

async function scanRaw(table: Table): Promise<Item[]> {
  const output = await table.raw.send(new ScanCommand({ TableName: table.tableName, ConsistentRead: true }));
  return output.Items ?? [];
}

async function drain<T>(iterable: AsyncIterable<T>): Promise<T[]> {
  const all: T[] = [];
  for await (const value of iterable) all.push(value);
  return all;
}

/** The fields a reader of a lock sees, in a comparable form. */
interface LockView {
  readonly partitionKey: string;
  readonly sortKey: string | undefined;
  readonly ownerName: string;
  readonly recordVersionNumber: string;
  readonly leaseDuration: number;
  readonly isReleased: boolean;
  /** base64 */
  readonly data: string | undefined;
  readonly additionalAttributes: Record<string, unknown>;
}

const viewOfSnapshot = (s: LockSnapshot): LockView => ({
  partitionKey: s.partitionKey,
  sortKey: s.sortKey,
  ownerName: s.ownerName,
  recordVersionNumber: s.recordVersionNumber,
  leaseDuration: s.leaseDuration,
  isReleased: s.isReleased,
  data: b64(s.data),
  additionalAttributes: s.additionalAttributes,
});

/** What the Java client recorded, read straight from the fixture's wire JSON. */
function viewOfJavaItem(s: JavaScenario, wire: WireItem): LockView {
  const str = (name: string): string => {
    const value = wire[name]?.S;
    if (value === undefined) throw new Error(`${s.file}: final item lacks ${name}: ${JSON.stringify(wire)}`);
    return value;
  };
  return {
    partitionKey: str(s.table.partitionKey),
    sortKey: s.table.sortKey === null ? undefined : str(s.table.sortKey),
    ownerName: str('ownerName'),
    recordVersionNumber: str('recordVersionNumber'),
    leaseDuration: Number(str('leaseDuration')),
    isReleased: 'isReleased' in wire,
    data: wire['data']?.B,
    // Java items carry nothing else; the sort key is not repeated here (a documented difference).
    additionalAttributes: {},
  };
}

const byKey = (a: LockView, b: LockView): number =>
  `${a.partitionKey}\u0000${a.sortKey ?? ''}`.localeCompare(`${b.partitionKey}\u0000${b.sortKey ?? ''}`);

// ── Java → us: reading every item the Java client left ─────────────────────

const withItems = scenarios.filter((s) => s.final_items.length > 0);

describe('Java → us: the items the Java client left are read as Java recorded them', () => {
  test('the fixtures hold Java-written items, held and released, with and without data and sort key', () => {
    const items = withItems.flatMap((s) => s.final_items);
    expect(withItems.length).toBeGreaterThanOrEqual(10);
    expect(items.some((item) => 'isReleased' in item)).toBe(true);
    expect(items.some((item) => !('isReleased' in item))).toBe(true);
    expect(items.some((item) => 'data' in item)).toBe(true);
    expect(withItems.some((s) => s.table.sortKey !== null)).toBe(true);
  });

  test.each(withItems.map((s) => ({ name: s.scenario, count: s.final_items.length, s })))('$name ($count item(s))', async ({ s }) => {
    const table = await freshTable(s.scenario, s.table);
    const stored = s.final_items.map((wire) => fromWireItem(wire));
    for (const item of stored) await putRaw(table, item);
    const { client: reader, recorder } = ourClient(table, { ownerName: 'ts-reader' });
    const expected = s.final_items.map((wire) => viewOfJavaItem(s, wire)).sort(byKey);

    // getAllLocks (Scan): every item, released ones included.
    const listed = await drain(reader.getAllLocks());
    expect(listed.every((snapshot) => snapshot instanceof LockSnapshot)).toBe(true);
    expect(listed.map(viewOfSnapshot).sort(byKey)).toEqual(expected);
    // The same through an eventually consistent Scan, as Java lists.
    expect((await drain(reader.getAllLocks({ consistentRead: false }))).map(viewOfSnapshot).sort(byKey)).toEqual(expected);

    for (const view of expected) {
      // getLocksByPartitionKey (Query) finds it.
      const byPartition = (await drain(reader.getLocksByPartitionKey(view.partitionKey))).map(viewOfSnapshot);
      expect(byPartition).toContainEqual(view);
      // getLock: a snapshot of a held lock; a released one reads as absent, as in Java.
      const got = await reader.getLock(view.partitionKey, { sortKey: view.sortKey });
      if (view.isReleased) {
        expect(got).toBeUndefined();
      } else {
        expect(got).toBeInstanceOf(LockSnapshot);
        expect(viewOfSnapshot(got as LockSnapshot)).toEqual(view);
      }
      // Under Java's own read rules the stored item reads the same.
      const java = javaReadLockItem((await getRaw(table, view.partitionKey, view.sortKey)) as Item, table.partitionKeyName);
      expect({
        ownerName: java.ownerName,
        recordVersionNumber: java.recordVersionNumber,
        leaseDuration: Number(java.leaseDuration),
        isReleased: java.isReleased,
        data: b64(java.data),
      }).toEqual({
        ownerName: view.ownerName,
        recordVersionNumber: view.recordVersionNumber,
        leaseDuration: view.leaseDuration,
        isReleased: view.isReleased,
        data: view.data,
      });
    }

    // What the Java harness printed about these same RVNs agrees with what we read.
    let matchedEvents = 0;
    for (const { events } of s.steps) {
      for (const event of events) {
        const view = expected.find((v) => v.recordVersionNumber === event.rvn);
        if (view === undefined) continue;
        matchedEvents++;
        if (event.owner !== undefined) expect(event.owner).toBe(view.ownerName);
        if (event.lease_ms !== undefined) expect(event.lease_ms).toBe(view.leaseDuration);
        if (event.event === 'lock') {
          expect(event.released).toBe(view.isReleased);
          expect(event.data === null || event.data === undefined ? undefined : b64(utf8Bytes(event.data))).toBe(view.data);
        }
      }
    }
    expect(matchedEvents).toBeGreaterThanOrEqual(expected.length);

    // Reading changed nothing.
    expect(recorder.sent.map((c) => c.name).filter((name) => WRITES.includes(name))).toEqual([]);
    const identity = (item: Item): string =>
      `${item[table.partitionKeyName]?.S}\u0000${table.sortKeyName === undefined ? '' : item[table.sortKeyName]?.S}`;
    const inOrder = (items: Item[]): Item[] => [...items].sort((a, b) => identity(a).localeCompare(identity(b)));
    expect(inOrder(await scanRaw(table))).toEqual(inOrder(stored));
  });
});

// ── Java → us: taking over Java's locks ─────────────────────────────────────

/**
 * Plays a live Java holder: sends the Java client's recorded heartbeat
 * (heartbeat.json, `SET #ld = :ld, #rvn = :newRvn` conditioned on RVN and
 * owner) every `periodMs`, chaining RVNs. `stop()` resolves with the last RVN
 * written and the monotonic time it was confirmed.
 */
function javaHeartbeats(table: Table, held: Item, periodMs: number): { stop: () => Promise<{ rvn: string; at: number }>; count: () => number } {
  const template = recordedRequest(
    scenario(table.sortKeyName === undefined ? 'heartbeat' : 'sort-key-heartbeat-and-release'),
    'A',
    'UpdateItem',
    table.tableName,
  );
  let rvn = held['recordVersionNumber']?.S as string;
  let at = performance.now();
  let count = 0;
  let running = true;
  const key: Item = { [table.partitionKeyName]: held[table.partitionKeyName] as Item[string] };
  if (table.sortKeyName !== undefined) key[table.sortKeyName] = held[table.sortKeyName] as Item[string];
  const loop = (async () => {
    while (running) {
      await sleep(periodMs);
      if (!running) break;
      const newRvn = randomUUID();
      await table.raw.send(
        new UpdateItemCommand({
          ...(template as unknown as UpdateItemCommandInput),
          Key: key,
          ExpressionAttributeValues: {
            ...template.ExpressionAttributeValues,
            ':rvn': { S: rvn },
            ':newRvn': { S: newRvn },
            ':on': held['ownerName'] as Item[string],
            ':ld': held['leaseDuration'] as Item[string],
          },
        }),
      );
      rvn = newRvn;
      at = performance.now();
      count++;
    }
  })();
  const stop = async () => {
    running = false;
    await loop;
    return { rvn, at };
  };
  opened.stoppers.push(stop);
  return { stop, count: () => count };
}

describe('Java → us: taking over the Java client’s locks', () => {
  test('a Java-held item (no isReleased) is taken only after its stored lease, with Java’s stale-lock PutItem', async () => {
    const java = scenario('acquire-expired-lock');
    const { item: javaItem } = onlyFinalItem(java); // owner-B, lease "2000", no data
    const storedLease = Number(javaItem['leaseDuration']?.S);
    expect(storedLease).toBe(2_000);
    const table = await freshTable('held', java.table);
    await putRaw(table, javaItem);
    // Our own lease is shorter: the wait must follow the lease stored on the Java item. No background heartbeats: the
    // item read after the takeover keeps the RVN it wrote.
    const { client, recorder } = ourClient(table, { leaseDuration: 1_000, heartbeatPeriod: 250, backgroundHeartbeats: false });
    const writes = () => writesAfterNewLockPut(recorder);

    // 1. Without waiting: unavailable after one call, the refused new-lock write, and nothing written.
    expect(await client.tryAcquireLock('lock-1', { shouldSkipBlockingWait: true })).toBeUndefined();
    expect(lockRequests(recorder).map((c) => c.name)).toEqual(['PutItemCommand']);
    expect(isNewLockPut(lockRequests(recorder)[0]!)).toBe(true);
    expect(await getRaw(table, 'lock-1')).toEqual(javaItem);

    // 2. Waiting less than the stored lease (but longer than our own lease): not taken.
    const aborted = await rejectionOf(
      client.acquireLock('lock-1', { refreshPeriod: 100, additionalTimeToWaitForLock: 0, signal: AbortSignal.timeout(1_500) }),
    );
    expect((aborted as Error).name).toBe('TimeoutError');
    expect(writes()).toEqual([]);
    expect(await getRaw(table, 'lock-1')).toEqual(javaItem);

    // 3. While the Java holder heartbeats, a short additional wait gives up after lease + that wait.
    const heartbeats = javaHeartbeats(table, javaItem, 500);
    let started = performance.now();
    const refused = await rejectionOf(client.acquireLock('lock-1', { refreshPeriod: 100, additionalTimeToWaitForLock: 100 }));
    const refusedAfter = performance.now() - started;
    expect(refused).toBeInstanceOf(LockNotGrantedError);
    expect((refused as LockNotGrantedError).holder?.ownerName).toBe('owner-B');
    expect(refusedAfter).toBeGreaterThanOrEqual(storedLease + 100);
    // Heartbeats went on throughout (every 500 ms; one fewer when this worker stalled for a while).
    expect(heartbeats.count()).toBeGreaterThanOrEqual(2);
    expect(writes()).toEqual([]);

    // 4. The Java holder dies: a caller that waits takes it over, one stored lease after the last RVN.
    const last = await heartbeats.stop();
    started = performance.now();
    const lock = await client.acquireLock('lock-1', { refreshPeriod: 100, additionalTimeToWaitForLock: 1_000 });
    expect(performance.now() - started).toBeGreaterThan(storedLease);
    expect(performance.now() - last.at).toBeGreaterThan(storedLease);

    // Exactly one write: Java's stale-lock PutItem (C7), conditioned on the last Java RVN. A takeover answered a heartbeat
    // period late is renewed at once, an UpdateItem of ours alone: not part of what Java sends.
    expect(
      writes()
        .filter((c) => c.name !== 'UpdateItemCommand')
        .map((c) => c.name),
    ).toEqual(['PutItemCommand']);
    const ours = writes()[0]?.input as unknown as PutItemCommandInput;
    const javas = recordedRequest(java, 'B', 'PutItem', table.tableName);
    expect(ours.ConditionExpression).toBe(javas['ConditionExpression']);
    expect(ours.ConditionExpression).toBe('attribute_exists(#pk) AND #rvn = :rvn');
    expect(ours.ExpressionAttributeNames).toEqual(javas['ExpressionAttributeNames']);
    expect(ours.ExpressionAttributeValues).toEqual({ ':rvn': { S: last.rvn } });
    expect(attributeTypes(ours.Item as Item)).toEqual(attributeTypes(javas.Item as Item));

    const stored = await getRaw(table, 'lock-1');
    expect(stored).toEqual({
      key: { S: 'lock-1' },
      ownerName: { S: client.ownerName },
      leaseDuration: { S: '1000' },
      recordVersionNumber: { S: lock.recordVersionNumber },
    });
    expect(await lock.release()).toBe(true);
  });

  test.each([
    {
      what: 'with the default options (Java’s acquire-released-lock)',
      compareWith: 'acquire-released-lock',
      options: {},
      expectedData: undefined,
    },
    {
      what: 'consistently, keeping the data (Java’s acquire-released-lock-consistent)',
      compareWith: 'acquire-released-lock-consistent',
      options: { acquireReleasedLocksConsistently: true, replaceData: false },
      expectedData: 'cGF5bG9hZC1B',
    },
  ])('a Java-released item (isReleased "1") is taken at once, $what', async ({ compareWith, options, expectedData }) => {
    const released = scenario('release-without-delete'); // owner-A, lease 20000, isReleased "1", data payload-A
    const { item: javaItem } = onlyFinalItem(released);
    expect(javaItem['isReleased']).toEqual({ S: '1' });
    const table = await freshTable('released', released.table);
    await putRaw(table, javaItem);
    const { client, recorder } = ourClient(table);

    const started = performance.now();
    const lock = await client.acquireLock('lock-1', { additionalTimeToWaitForLock: 0, ...options });
    expect(performance.now() - started).toBeLessThan(10_000); // nowhere near the 20 s lease

    // Two calls: the refused new-lock write, whose ALL_OLD item shows the release, then Java's released-lock write.
    expect(lockRequests(recorder).map((c) => c.name)).toEqual(['PutItemCommand', 'PutItemCommand']);
    expect(isNewLockPut(lockRequests(recorder)[0]!)).toBe(true);
    const ours = lockRequests(recorder)[1]?.input as unknown as PutItemCommandInput;
    const java = scenario(compareWith);
    const javas = recordedRequest(java, 'B', 'PutItem', table.tableName);
    expect(ours.ConditionExpression).toBe(javas['ConditionExpression']);
    expect(ours.ExpressionAttributeNames).toEqual(javas['ExpressionAttributeNames']);
    expect(Object.keys(ours.ExpressionAttributeValues ?? {}).sort()).toEqual(Object.keys(javas.ExpressionAttributeValues ?? {}).sort());
    expect(ours.ExpressionAttributeValues?.[':ir']).toEqual({ S: '1' });
    if (options.acquireReleasedLocksConsistently) {
      expect(ours.ExpressionAttributeValues?.[':rvn']).toEqual(javaItem['recordVersionNumber']);
    }

    const stored = (await getRaw(table, 'lock-1')) as Item;
    expect(attributeTypes(stored)).toEqual(wireAttributeTypes(onlyFinalItem(java).wire));
    expect(stored['isReleased']).toBeUndefined();
    expect(stored['ownerName']).toEqual({ S: client.ownerName });
    expect(b64(stored['data']?.B)).toBe(expectedData);
    expect(b64(lock.data)).toBe(expectedData);
    expect(await lock.release()).toBe(true);
  });
});

// ── us → Java: our items are the Java client's items ───────────────────────

describe('us → Java: our items have exactly the Java client’s attribute names and types', () => {
  /** The checks every item we leave must pass for a Java reader. */
  function expectJavaReadable(
    table: Table,
    item: Item,
    expected: { ownerName: string; rvn: string; lease: number; released: boolean; data?: string },
  ): void {
    const java = javaReadLockItem(item, table.partitionKeyName);
    expect(item['recordVersionNumber']?.S).toMatch(JAVA_UUID);
    expect(item['leaseDuration']?.S).toMatch(JAVA_LEASE);
    if (expected.released) expect(item['isReleased']).toEqual({ S: '1' });
    expect({
      ownerName: java.ownerName,
      rvn: java.recordVersionNumber,
      lease: java.leaseDuration,
      released: java.isReleased,
      data: b64(java.data),
      additional: Object.keys(java.additionalAttributes),
    }).toEqual({
      ownerName: expected.ownerName,
      rvn: expected.rvn,
      lease: BigInt(expected.lease),
      released: expected.released,
      data: expected.data,
      // Java keeps the sort key among the additional attributes; nothing else is left over.
      additional: table.sortKeyName === undefined ? [] : [table.sortKeyName],
    });
  }

  test('held, without data: as Java’s acquire-free-lock item', async () => {
    const java = scenario('acquire-free-lock');
    const table = await freshTable('our-held', java.table);
    const { client } = ourClient(table);
    const lock = await client.acquireLock('lock-1', { additionalTimeToWaitForLock: 0 });

    const item = (await getRaw(table, 'lock-1')) as Item;
    expect(attributeTypes(item)).toEqual(wireAttributeTypes(onlyFinalItem(java).wire));
    expectJavaReadable(table, item, { ownerName: client.ownerName, rvn: lock.recordVersionNumber, lease: 2_000, released: false });
    expect(await lock.release()).toBe(true);
  });

  test('held, with data: as Java’s acquire-with-data item, byte for byte in data', async () => {
    const java = scenario('acquire-with-data');
    const { wire } = onlyFinalItem(java);
    const javaData = java.steps.find((step) => step.label === 'A')?.events.find((e) => e.event === 'acquired')?.data;
    expect(javaData).toBe('hello wörld {"n":1}');
    const table = await freshTable('our-held-data', java.table);
    const { client } = ourClient(table);
    const lock = await client.acquireLock('lock-1', { data: javaData as string, additionalTimeToWaitForLock: 0 });

    const item = (await getRaw(table, 'lock-1')) as Item;
    expect(attributeTypes(item)).toEqual(wireAttributeTypes(wire));
    expect(b64(item['data']?.B)).toBe(wire['data']?.B);
    expectJavaReadable(table, item, {
      ownerName: client.ownerName,
      rvn: lock.recordVersionNumber,
      lease: 2_000,
      released: false,
      data: wire['data']?.B,
    });

    // After heartbeats the names and types stay those of Java's heartbeated item.
    const first = lock.recordVersionNumber;
    await waitUntil('a background heartbeat', () => lock.recordVersionNumber !== first);
    const beaten = (await getRaw(table, 'lock-1')) as Item;
    expect(attributeTypes(beaten)).toEqual(wireAttributeTypes(onlyFinalItem(scenario('heartbeat')).wire));
    // The next heartbeat may be applied and not yet answered: the table then holds the lock's RVN once it is.
    await waitUntil(
      'the table holds the heartbeat RVN',
      async () => (await getRaw(table, 'lock-1'))?.['recordVersionNumber']?.S === lock.recordVersionNumber,
    );
    expect(await lock.release()).toBe(true);
  });

  test('held through UpdateItem (updateExistingLockRecord): as Java’s acquire-free-lock-update-existing item', async () => {
    const java = scenario('acquire-free-lock-update-existing');
    const table = await freshTable('our-held-update', java.table);
    // A heartbeat period far above any reply: a late one would add a renewal, one more UpdateItem.
    const { client, recorder } = ourClient(table, { leaseDuration: 20_000, heartbeatPeriod: 5_000 });
    const lock = await client.acquireLock('lock-1', { data: 'payload-A', updateExistingLockRecord: true, additionalTimeToWaitForLock: 0 });

    expect(recorder.named('UpdateItemCommand')).toHaveLength(1);
    const { wire } = onlyFinalItem(java);
    const item = (await getRaw(table, 'lock-1')) as Item;
    expect(attributeTypes(item)).toEqual(wireAttributeTypes(wire));
    expect(b64(item['data']?.B)).toBe(wire['data']?.B);
    expect(await lock.release()).toBe(true);
  });

  test.each([
    { what: 'with data', compareWith: 'release-without-delete', data: 'payload-A', releaseData: undefined, key: 'lock-1' },
    { what: 'without data', compareWith: 'scan', data: undefined, releaseData: undefined, key: 'released-lock' },
    {
      what: 'leaving release data',
      compareWith: 'release-without-delete-with-data',
      data: 'payload-A',
      releaseData: 'final-state',
      key: 'lock-1',
    },
  ])(
    'released with deleteLock: false, $what: as Java’s $compareWith item; Java takes it at once',
    async ({ compareWith, data, releaseData, key }) => {
      const java = scenario(compareWith);
      const { wire } = finalItemByKey(java, key);
      expect('isReleased' in wire).toBe(true);
      const table = await freshTable('our-released', java.table);
      const { client } = ourClient(table);
      const lock = await client.acquireLock(key, { data, additionalTimeToWaitForLock: 0 });
      expect(await lock.release({ deleteLock: false, data: releaseData })).toBe(true);

      const item = (await getRaw(table, key)) as Item;
      expect(attributeTypes(item)).toEqual(wireAttributeTypes(wire));
      expect(b64(item['data']?.B)).toBe(wire['data']?.B);
      // Unlike Java, our release writes a new RVN (PROTOCOL.md §9.2 item 2): no late heartbeat can match it.
      const releasedRvn = item['recordVersionNumber']?.S as string;
      expect(releasedRvn).not.toBe(lock.recordVersionNumber);
      expectJavaReadable(table, item, { ownerName: client.ownerName, rvn: releasedRvn, lease: 2_000, released: true, data: wire['data']?.B });

      // Java's own takeover of a released lock (acquire-released-lock, owner-B's PutItem), replayed on ours:
      // its condition (C3) does not look at the RVN, so the new RVN changes nothing for it.
      const javaTakeover = recordedRequest(scenario('acquire-released-lock'), 'B', 'PutItem', table.tableName);
      const javaItem = { ...(javaTakeover.Item as Item), key: { S: key } };
      await table.raw.send(new PutItemCommand({ ...(javaTakeover as unknown as PutItemCommandInput), Item: javaItem }));
      expect(await getRaw(table, key)).toEqual(javaItem);
    },
  );

  test('Java’s consistent takeover of a released lock still works on ours, and a late heartbeat cannot revive it', async () => {
    const java = scenario('acquire-released-lock-consistent');
    const table = await freshTable('our-released-consistent', java.table);
    const { client } = ourClient(table);
    const lock = await client.acquireLock('lock-1', { additionalTimeToWaitForLock: 0 });
    const heldRvn = lock.recordVersionNumber;
    expect(await lock.release({ deleteLock: false })).toBe(true);

    // A Java heartbeat still carrying the pre-release RVN (C10 + U3, as Java sends it) fails:
    // this is why the release writes a new RVN.
    const javaHeartbeat = recordedRequest(scenario('heartbeat'), 'A', 'UpdateItem', table.tableName);
    const lateHeartbeat = {
      ...(javaHeartbeat as unknown as UpdateItemCommandInput),
      Key: { key: { S: 'lock-1' } },
      ExpressionAttributeValues: {
        ...(javaHeartbeat.ExpressionAttributeValues as Item),
        ':rvn': { S: heldRvn },
        ':on': { S: client.ownerName },
      },
    };
    expect(await rejectionOf(table.raw.send(new UpdateItemCommand(lateHeartbeat)))).toMatchObject({
      name: 'ConditionalCheckFailedException',
    });
    expect((await getRaw(table, 'lock-1'))?.['isReleased']).toEqual({ S: '1' });

    // Java's consistent takeover (C5) conditions on the RVN it reads after the release: the new one.
    const releasedRvn = (await getRaw(table, 'lock-1'))?.['recordVersionNumber'] as { S: string };
    const javaTakeover = recordedRequest(java, 'B', 'PutItem', table.tableName);
    expect(javaTakeover.ConditionExpression).toBe('(attribute_exists(#pk) AND #rvn = :rvn AND #ir = :ir)');
    await table.raw.send(
      new PutItemCommand({
        ...(javaTakeover as unknown as PutItemCommandInput),
        ExpressionAttributeValues: { ...(javaTakeover.ExpressionAttributeValues as Item), ':rvn': releasedRvn },
      }),
    );
    expect((await getRaw(table, 'lock-1'))?.['ownerName']).toEqual(javaTakeover.Item?.['ownerName']);
  });

  test('Java’s stale-lock takeover (acquire-expired-lock, owner-B’s PutItem) replayed on our held item is accepted, and we notice the loss', async () => {
    const java = scenario('acquire-expired-lock');
    const table = await freshTable('our-stale', java.table);
    const { client } = ourClient(table, { leaseDuration: 2_000, heartbeatPeriod: 500 });
    const lock = await client.acquireLock('lock-1', { additionalTimeToWaitForLock: 0 });

    const javaTakeover = recordedRequest(java, 'B', 'PutItem', table.tableName);
    await table.raw.send(
      new PutItemCommand({
        ...(javaTakeover as unknown as PutItemCommandInput),
        ExpressionAttributeValues: { ':rvn': { S: lock.recordVersionNumber } },
      }),
    );
    expect((await getRaw(table, 'lock-1'))?.['ownerName']).toEqual({ S: 'owner-B' });
    await waitUntil('our client notices the takeover', () => lock.state === 'lost', { timeoutMs: 2_000 });
    expect(client.hasLock('lock-1')).toBe(false);
    expect(await lock.release()).toBe(false);
    expect((await getRaw(table, 'lock-1'))?.['ownerName']).toEqual({ S: 'owner-B' });
  });
});

// ── Sort-key tables ────────────────────────────────────────────────────────

describe('sort-key tables, both ways', () => {
  test('a Java-held sort-key item is taken over after its stored lease with Java’s C8 PutItem', async () => {
    const java = scenario('sort-key-acquire-released-and-expired');
    const { item: javaItem } = onlyFinalItem(java); // owner-C, lease 2000, sortKey shard-7
    const table = await freshTable('sk-held', java.table);
    await putRaw(table, javaItem);
    const { client, recorder } = ourClient(table);

    const snapshot = await client.getLock('lock-1', { sortKey: 'shard-7' });
    expect(snapshot).toBeInstanceOf(LockSnapshot);
    expect((snapshot as LockSnapshot).ownerName).toBe('owner-C');
    expect(await client.tryAcquireLock('lock-1', { sortKey: 'shard-7', shouldSkipBlockingWait: true })).toBeUndefined();

    const started = performance.now();
    const lock = await client.acquireLock('lock-1', { sortKey: 'shard-7', refreshPeriod: 100, additionalTimeToWaitForLock: 1_000 });
    expect(performance.now() - started).toBeGreaterThan(2_000);

    const puts = writesAfterNewLockPut(recorder);
    expect(puts.map((c) => c.name)).toEqual(['PutItemCommand']);
    const ours = puts[0]?.input as unknown as PutItemCommandInput;
    const javas = recordedRequest(java, 'C', 'PutItem', table.tableName);
    expect(ours.ConditionExpression).toBe(javas['ConditionExpression']);
    expect(ours.ConditionExpression).toBe('attribute_exists(#pk) AND attribute_exists(#sk) AND #rvn = :rvn');
    expect(ours.ExpressionAttributeNames).toEqual(javas['ExpressionAttributeNames']);
    expect(ours.ExpressionAttributeValues).toEqual({ ':rvn': javaItem['recordVersionNumber'] });
    const stored = (await getRaw(table, 'lock-1', 'shard-7')) as Item;
    expect(attributeTypes(stored)).toEqual(attributeTypes(javaItem));
    expect(stored['ownerName']).toEqual({ S: client.ownerName });
    expect(lock.sortKey).toBe('shard-7');
    expect(await lock.release()).toBe(true);
  });

  test('a Java-released sort-key item is taken at once with Java’s C4 PutItem', async () => {
    const released = scenario('sort-key-heartbeat-and-release');
    const { item: javaItem } = onlyFinalItem(released); // owner-A, isReleased "1", sortKey shard-7
    const table = await freshTable('sk-released', released.table);
    await putRaw(table, javaItem);
    const { client, recorder } = ourClient(table);

    expect(await client.getLock('lock-1', { sortKey: 'shard-7' })).toBeUndefined();
    const started = performance.now();
    const lock = await client.acquireLock('lock-1', { sortKey: 'shard-7', additionalTimeToWaitForLock: 0 });
    expect(performance.now() - started).toBeLessThan(1_500); // well below the item's 2 s lease

    const ours = writesAfterNewLockPut(recorder)[0]?.input as unknown as PutItemCommandInput;
    const javas = recordedRequest(scenario('sort-key-acquire-released-and-expired'), 'B', 'PutItem', table.tableName);
    expect(ours.ConditionExpression).toBe(javas['ConditionExpression']);
    expect(ours.ConditionExpression).toBe('attribute_exists(#pk) AND attribute_exists(#sk) AND #ir = :ir');
    expect(ours.ExpressionAttributeNames).toEqual(javas['ExpressionAttributeNames']);
    expect(ours.ExpressionAttributeValues).toEqual(javas.ExpressionAttributeValues);
    expect((await getRaw(table, 'lock-1', 'shard-7'))?.['isReleased']).toBeUndefined();
    expect(await lock.release()).toBe(true);
  });

  test('our sort-key items: held with data as Java’s acquire-free-lock-sort-key, released as Java’s sort-key-heartbeat-and-release', async () => {
    const heldJava = onlyFinalItem(scenario('acquire-free-lock-sort-key')).wire;
    const releasedJava = onlyFinalItem(scenario('sort-key-heartbeat-and-release')).wire;
    const table = await freshTable('sk-ours', scenario('acquire-free-lock-sort-key').table);
    const { client } = ourClient(table);

    const held = await client.acquireLock('lock-1', { sortKey: 'shard-7', data: 'payload-A', additionalTimeToWaitForLock: 0 });
    const heldItem = (await getRaw(table, 'lock-1', 'shard-7')) as Item;
    expect(attributeTypes(heldItem)).toEqual(wireAttributeTypes(heldJava));
    expect(b64(heldItem['data']?.B)).toBe(heldJava['data']?.B);
    expect(heldItem['sortKey']).toEqual({ S: 'shard-7' });
    expect(await held.release()).toBe(true);

    const toRelease: Lock = await client.acquireLock('lock-1', { sortKey: 'shard-7', additionalTimeToWaitForLock: 0 });
    expect(await toRelease.release({ deleteLock: false })).toBe(true);
    const releasedItem = (await getRaw(table, 'lock-1', 'shard-7')) as Item;
    expect(attributeTypes(releasedItem)).toEqual(wireAttributeTypes(releasedJava));
    expect(releasedItem['isReleased']).toEqual({ S: '1' });
    expect(javaReadLockItem(releasedItem, 'key')).toMatchObject({ ownerName: client.ownerName, isReleased: true });
    expect(releasedItem['recordVersionNumber']?.S).not.toBe(toRelease.recordVersionNumber);

    // Java's C4 takeover of a released sort-key lock, replayed on ours.
    const javaTakeover = recordedRequest(scenario('sort-key-acquire-released-and-expired'), 'B', 'PutItem', table.tableName);
    await table.raw.send(new PutItemCommand(javaTakeover as unknown as PutItemCommandInput));
    expect((await getRaw(table, 'lock-1', 'shard-7'))?.['ownerName']).toEqual({ S: 'owner-B' });
  });
});
