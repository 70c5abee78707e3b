/**
 * Bad input against a real DynamoDB Local: every refused argument is a typed
 * error with a clear message, and where the check can be made locally, no
 * request reaches DynamoDB (counted through a recording `dynamoDB`). Errors
 * that need DynamoDB's answer (missing table, key schema mismatch, malformed
 * items) are typed too, and never lead to a write. Last, the background
 * heartbeat survives a lock being destroyed under it.
 */
import { afterAll, afterEach, beforeAll, describe, expect, test } from '@jest/globals';
import {
  DeleteItemCommand,
  DeleteTableCommand,
  GetItemCommand,
  PutItemCommand,
  UpdateItemCommand,
  type AttributeValue,
  type DynamoDBClient,
} from '@aws-sdk/client-dynamodb';
import { randomUUID } from 'node:crypto';
import {
  InvalidArgumentError,
  LeaderElection,
  Lock,
  LockClient,
  LockClientClosedError,
  LockLostError,
  LockTableDoesNotExistError,
  LockTableSchemaMismatchError,
  MalformedLockItemError,
  type InvalidArgumentCode,
  type LockClientSettings,
} from '../src/index.js';
import { newLocalClient, uniqueTableName } from '../test-kit/aws.js';
import { recording, sleep, waitUntil, type RecordingDynamoDB } from '../test-kit/test-locks.js';

type Item = Record<string, AttributeValue>;
type ErrorClass = abstract new (...args: never[]) => Error;

/** Short leases, as everywhere in the integration tests. */
const LEASE = 2_000;
const HEARTBEAT = 500;
const WRITES = ['PutItemCommand', 'UpdateItemCommand', 'DeleteItemCommand'];

const KIB = 1024;
const MAX_ITEM = 400 * KIB;
const utf8Length = (text: string): number => new TextEncoder().encode(text).byteLength;

/** Runs `action` (sync or async) and returns what it threw; fails if it did not throw. */
async function failureOf(action: () => unknown): Promise<unknown> {
  try {
    await action();
  } catch (error) {
    return error;
  }
  throw new Error('expected the call to fail, but it succeeded');
}

async function drain(iterable: AsyncIterable<unknown>): Promise<unknown[]> {
  const all: unknown[] = [];
  for await (const value of iterable) all.push(value);
  return all;
}

let raw: DynamoDBClient;
let hashTable: string;
let sortTable: string;

beforeAll(async () => {
  raw = newLocalClient();
  hashTable = uniqueTableName('bad-input-hash');
  sortTable = uniqueTableName('bad-input-sort');
  const creators = [
    new LockClient({ dynamoDB: raw, tableName: hashTable }),
    new LockClient({ dynamoDB: raw, tableName: sortTable, sortKeyName: 'sortKey' }),
  ];
  try {
    await Promise.all(creators.map((creator) => creator.createLockTable()));
  } finally {
    await Promise.all(creators.map((creator) => creator.close()));
  }
});

afterAll(() => {
  raw?.destroy();
});

async function rawItem(tableName: string, key: Item): Promise<Item | undefined> {
  const output = await raw.send(new GetItemCommand({ TableName: tableName, Key: key, ConsistentRead: true }));
  return output.Item === undefined || Object.keys(output.Item).length === 0 ? undefined : output.Item;
}

/** What a row's action gets: clients on the counting `dynamoDB`, and a way to take a held lock first. */
interface Bench {
  /** Hash-only table, partition key "key", lease 2 s, heartbeat 0.5 s. */
  readonly hash: LockClient;
  /** Table with sort key "sortKey". */
  readonly sort: LockClient;
  /** Another client with these settings (table defaults to the hash-only one), on the counting `dynamoDB`. */
  client(settings?: Partial<LockClientSettings>): LockClient;
  /** A freshly acquired lock; requests sent so far are not counted. */
  held(client?: LockClient): Promise<Lock>;
}

/** One bad input. */
interface Row {
  readonly input: string;
  readonly action: (bench: Bench) => unknown;
  readonly error: ErrorClass;
  readonly code?: InvalidArgumentCode;
  readonly message: string | RegExp;
}

/** Counting requests of one test; everything it made is closed in afterEach. */
class Harness implements Bench {
  readonly recorder: RecordingDynamoDB = recording(raw);
  /** Requests sent before this index were made by setup (e.g. `held`). */
  baseline = 0;
  readonly clients: LockClient[] = [];
  readonly locks: Lock[] = [];
  readonly hash: LockClient;
  readonly sort: LockClient;

  constructor() {
    this.hash = this.client();
    this.sort = this.client({ tableName: sortTable, sortKeyName: 'sortKey' });
  }

  client(settings: Partial<LockClientSettings> = {}): LockClient {
    const client = new LockClient({
      tableName: hashTable,
      ownerName: `bad-input-${randomUUID()}`,
      leaseDuration: LEASE,
      heartbeatPeriod: HEARTBEAT,
      ...settings,
      dynamoDB: this.recorder.dynamoDB,
    });
    this.clients.push(client);
    return client;
  }

  async held(client: LockClient = this.hash): Promise<Lock> {
    const lock = await client.acquireLock(`held-${randomUUID()}`, { additionalTimeToWaitForLock: 0 });
    this.locks.push(lock);
    this.baseline = this.recorder.sent.length;
    return lock;
  }

  /** Requests the action itself sent. */
  sentByAction(): string[] {
    return this.recorder.sent.slice(this.baseline).map((command) => command.name);
  }

  /**
   * Writes the action sent, leaving out acquisitions' first try: the new-lock
   * PutItem, conditioned on the item not existing, which can only create a
   * missing lock and so cannot have changed or replaced anything.
   */
  writesBesidesNewLockPuts(): string[] {
    return this.recorder.sent
      .slice(this.baseline)
      .filter((command) => WRITES.includes(command.name))
      .filter(
        (command) =>
          !(command.name === 'PutItemCommand' && String(command.input['ConditionExpression']).startsWith('attribute_not_exists(#pk)')),
      )
      .map((command) => command.name);
  }

  async dispose(): Promise<void> {
    await Promise.allSettled(this.clients.map((client) => client.close()));
  }
}

let harness: Harness | undefined;
const bench = (): Harness => (harness ??= new Harness());

afterEach(async () => {
  await harness?.dispose();
  harness = undefined;
});

const reserved = (name: string, table: 'hash' | 'sort' = 'hash'): Row => ({
  input: `additional attribute named ${JSON.stringify(name)} (${table} table)`,
  action: (b) =>
    (table === 'hash' ? b.hash : b.sort).acquireLock('k', {
      ...(table === 'sort' ? { sortKey: 's' } : {}),
      additionalAttributes: { [name]: 'x' },
    }),
  error: InvalidArgumentError,
  code: 'RESERVED_ATTRIBUTE',
  message: `Additional attribute ${JSON.stringify(name)} is reserved by the lock protocol`,
});

/**
 * Size of the item of a lock on the hash table: names and values of key,
 * ownerName, leaseDuration ("2000"), recordVersionNumber (36) and data.
 */
// One attribute's name and value a line.
// prettier-ignore
const itemSizeWithData = (partitionKey: string, ownerName: string, dataBytes: number): number =>
  'key'.length + utf8Length(partitionKey) +
  'ownerName'.length + utf8Length(ownerName) +
  'leaseDuration'.length + String(LEASE).length +
  'recordVersionNumber'.length + 36 +
  'data'.length + dataBytes;

// eslint-disable-next-line @typescript-eslint/no-unsafe-class-instance-assignment -- not being a Lock is the point
const NOT_A_LOCK = {} as Lock;

// A table, one case a line.
// prettier-ignore
const localRows: Row[] = [
  // ── Keys ────────────────────────────────────────────────────────────────
  { input: 'empty partition key (acquireLock)', action: (b) => b.hash.acquireLock(''), error: InvalidArgumentError, code: 'EMPTY_KEY', message: 'The partition key must not be empty' },
  { input: 'empty partition key (tryAcquireLock)', action: (b) => b.hash.tryAcquireLock(''), error: InvalidArgumentError, code: 'EMPTY_KEY', message: 'The partition key must not be empty' },
  { input: 'empty partition key (getLock)', action: (b) => b.hash.getLock(''), error: InvalidArgumentError, code: 'EMPTY_KEY', message: 'The partition key must not be empty' },
  { input: 'empty partition key (getLocksByPartitionKey)', action: (b) => drain(b.hash.getLocksByPartitionKey('')), error: InvalidArgumentError, code: 'EMPTY_KEY', message: 'The partition key must not be empty' },
  { input: 'number as partition key', action: (b) => b.hash.acquireLock(42 as unknown as string), error: InvalidArgumentError, code: 'EMPTY_KEY', message: 'The partition key must be a string, got number' },
  { input: 'undefined partition key', action: (b) => b.hash.acquireLock(undefined as unknown as string), error: InvalidArgumentError, code: 'EMPTY_KEY', message: 'The partition key must be a string, got undefined' },
  { input: 'null partition key', action: (b) => b.hash.getLock(null as unknown as string), error: InvalidArgumentError, code: 'EMPTY_KEY', message: 'The partition key must be a string, got null' },
  { input: 'partition key of 2049 ASCII bytes', action: (b) => b.hash.acquireLock('a'.repeat(2049)), error: InvalidArgumentError, code: 'KEY_TOO_LONG', message: 'The partition key is 2049 bytes in UTF-8; DynamoDB allows at most 2048' },
  { input: "partition key of 683 × '€' (683 chars, 2049 bytes)", action: (b) => b.hash.acquireLock('€'.repeat(683)), error: InvalidArgumentError, code: 'KEY_TOO_LONG', message: 'The partition key is 2049 bytes in UTF-8' },
  { input: "partition key of 513 × '😀' (1026 UTF-16 units, 2052 bytes)", action: (b) => b.hash.tryAcquireLock('😀'.repeat(513)), error: InvalidArgumentError, code: 'KEY_TOO_LONG', message: 'The partition key is 2052 bytes in UTF-8' },
  { input: 'partition key over 2048 bytes (getLock)', action: (b) => b.hash.getLock('€'.repeat(683)), error: InvalidArgumentError, code: 'KEY_TOO_LONG', message: '2049 bytes' },
  { input: 'partition key over 2048 bytes (getLocksByPartitionKey)', action: (b) => drain(b.sort.getLocksByPartitionKey('x'.repeat(2049))), error: InvalidArgumentError, code: 'KEY_TOO_LONG', message: '2049 bytes' },
  { input: 'sort key of 1025 ASCII bytes', action: (b) => b.sort.acquireLock('k', { sortKey: 's'.repeat(1025) }), error: InvalidArgumentError, code: 'KEY_TOO_LONG', message: 'The sort key is 1025 bytes in UTF-8; DynamoDB allows at most 1024' },
  { input: "sort key of 342 × '€' (1026 bytes)", action: (b) => b.sort.getLock('k', { sortKey: '€'.repeat(342) }), error: InvalidArgumentError, code: 'KEY_TOO_LONG', message: 'The sort key is 1026 bytes' },
  { input: 'partition key with a lone surrogate ("x\\ud800", which DynamoDB would store as "x\\ufffd")', action: (b) => b.hash.acquireLock('x\ud800'), error: InvalidArgumentError, code: 'MALFORMED_KEY', message: 'The partition key is not well-formed UTF-16' },
  { input: 'sort key with a lone surrogate', action: (b) => b.sort.getLock('k', { sortKey: '\udc01' }), error: InvalidArgumentError, code: 'MALFORMED_KEY', message: 'The sort key is not well-formed UTF-16' },
  { input: 'refreshPeriod over 2^31 - 1 ms', action: (b) => b.hash.acquireLock('k', { refreshPeriod: 2 ** 31 }), error: InvalidArgumentError, code: 'INVALID_DURATION', message: 'refreshPeriod must be a whole number of milliseconds ≥ 10 and ≤ 2147483647 (about 24.8 days), got 2147483648' },
  { input: 'additionalTimeToWaitForLock over 2^31 - 1 ms (Infinity waits without end)', action: (b) => b.hash.acquireLock('k', { additionalTimeToWaitForLock: 2 ** 40 }), error: InvalidArgumentError, code: 'INVALID_DURATION', message: 'or Infinity' },
  { input: 'empty sort key', action: (b) => b.sort.acquireLock('k', { sortKey: '' }), error: InvalidArgumentError, code: 'EMPTY_KEY', message: 'The sort key must not be empty' },
  { input: 'number as sort key', action: (b) => b.sort.acquireLock('k', { sortKey: 7 as unknown as string }), error: InvalidArgumentError, code: 'EMPTY_KEY', message: 'The sort key must be a string, got number' },
  { input: 'sort key on a table without sortKeyName (acquireLock)', action: (b) => b.hash.acquireLock('k', { sortKey: 's' }), error: InvalidArgumentError, code: 'SORT_KEY_NOT_ALLOWED', message: 'the client has no sortKeyName' },
  { input: 'sort key on a table without sortKeyName (getLock)', action: (b) => b.hash.getLock('k', { sortKey: 's' }), error: InvalidArgumentError, code: 'SORT_KEY_NOT_ALLOWED', message: 'A sort key was given' },
  { input: 'no sort key on a table with sortKeyName (acquireLock)', action: (b) => b.sort.acquireLock('k'), error: InvalidArgumentError, code: 'SORT_KEY_REQUIRED', message: 'The lock table has sort key "sortKey"; pass options.sortKey' },
  { input: 'no sort key on a table with sortKeyName (tryAcquireLock)', action: (b) => b.sort.tryAcquireLock('k'), error: InvalidArgumentError, code: 'SORT_KEY_REQUIRED', message: 'pass options.sortKey' },
  { input: 'no sort key on a table with sortKeyName (getLock)', action: (b) => b.sort.getLock('k'), error: InvalidArgumentError, code: 'SORT_KEY_REQUIRED', message: 'pass options.sortKey' },

  // ── Item size ───────────────────────────────────────────────────────────
  { input: 'data of 400 KiB (item > 400 KB)', action: (b) => b.hash.acquireLock('k', { data: new Uint8Array(MAX_ITEM) }), error: InvalidArgumentError, code: 'ITEM_TOO_LARGE', message: /The lock item would be \d+ bytes \(data and additional attributes included\); DynamoDB allows at most 409600/ },
  { input: 'data string of 200 Ki × "é" (400 KiB in UTF-8)', action: (b) => b.hash.acquireLock('k', { data: 'é'.repeat(200 * KIB) }), error: InvalidArgumentError, code: 'ITEM_TOO_LARGE', message: 'DynamoDB allows at most 409600' },
  {
    input: 'data one byte over the exact 409600-byte limit',
    action: (b) => b.hash.acquireLock('k', { data: new Uint8Array(MAX_ITEM - itemSizeWithData('k', b.hash.ownerName, 0) + 1) }),
    error: InvalidArgumentError,
    code: 'ITEM_TOO_LARGE',
    message: 'The lock item would be 409601 bytes',
  },
  { input: 'additional attributes of 400 KiB', action: (b) => b.hash.acquireLock('k', { additionalAttributes: { blob: 'x'.repeat(MAX_ITEM) } }), error: InvalidArgumentError, code: 'ITEM_TOO_LARGE', message: 'DynamoDB allows at most 409600' },
  { input: 'data plus additional attributes over 400 KB together', action: (b) => b.sort.acquireLock('k', { sortKey: 's', data: new Uint8Array(210 * KIB), additionalAttributes: { more: { nested: ['y'.repeat(200 * KIB)] } } }), error: InvalidArgumentError, code: 'ITEM_TOO_LARGE', message: 'DynamoDB allows at most 409600' },

  // ── Additional attributes ────────────────────────────────────────────────
  reserved('key'),
  reserved('ownerName'),
  reserved('leaseDuration'),
  reserved('recordVersionNumber'),
  reserved('data'),
  reserved('isReleased'),
  reserved('sortKey', 'sort'),
  reserved('key', 'sort'),
  reserved('isReleased', 'sort'),
  reserved('rvnWrittenAt'),
  {
    input: 'additional attribute named like a custom partitionKeyName',
    action: (b) => b.client({ partitionKeyName: 'lockName' }).acquireLock('k', { additionalAttributes: { lockName: 'x' } }),
    error: InvalidArgumentError,
    code: 'RESERVED_ATTRIBUTE',
    message: 'Additional attribute "lockName" is reserved',
  },
  { input: 'additional attribute holding an empty Set', action: (b) => b.hash.acquireLock('k', { additionalAttributes: { tags: new Set<string>() } }), error: InvalidArgumentError, code: 'INVALID_ATTRIBUTE_VALUE', message: 'Additional attributes cannot be stored in DynamoDB' },
  {
    input: 'additional attribute named __proto__',
    action: (b) => b.hash.acquireLock('k', { additionalAttributes: JSON.parse('{"__proto__": "x"}') as Record<string, unknown> }),
    error: InvalidArgumentError,
    code: 'INVALID_ATTRIBUTE_VALUE',
    message: 'Additional attribute "__proto__": attributes or map keys named "__proto__" or "constructor" cannot be stored',
  },
  { input: 'additional attribute holding a Date', action: (b) => b.hash.acquireLock('k', { additionalAttributes: { at: new Date(0) } }), error: InvalidArgumentError, code: 'INVALID_ATTRIBUTE_VALUE', message: 'Additional attributes cannot be stored in DynamoDB' },
  { input: 'data that is a number', action: (b) => b.hash.acquireLock('k', { data: 42 as unknown as string }), error: InvalidArgumentError, code: 'INVALID_OPTION', message: 'data must be a Uint8Array (or Buffer) or a string' },

  {
    input: 'signal that is an AbortController, not its signal',
    action: (b) => b.hash.acquireLock('k', { signal: new AbortController() as unknown as AbortSignal }),
    error: InvalidArgumentError,
    code: 'INVALID_OPTION',
    message: 'signal must be an AbortSignal (pass its .signal), got an object (AbortController)',
  },
  { input: 'withLock with a routine that is not a function', action: (b) => b.hash.withLock('k', 'work' as never), error: InvalidArgumentError, code: 'INVALID_OPTION', message: 'withLock: routine must be a function' },
  { input: 'lead() with a routine that is not a function', action: (b) => new LeaderElection(b.hash, 'k').lead(42 as never), error: InvalidArgumentError, code: 'INVALID_OPTION', message: 'lead: routine must be a function' },

  // ── Client settings ──────────────────────────────────────────────────────
  { input: 'heartbeatPeriod more than half the lease (600 of 1000)', action: (b) => b.client({ leaseDuration: 1_000, heartbeatPeriod: 600 }), error: InvalidArgumentError, code: 'LEASE_TOO_SHORT', message: 'leaseDuration (1000 ms) must be at least twice heartbeatPeriod (600 ms)' },
  { input: 'heartbeatPeriod over half the default lease (10001 of 20000)', action: (b) => b.client({ leaseDuration: undefined, heartbeatPeriod: 10_001 }), error: InvalidArgumentError, code: 'LEASE_TOO_SHORT', message: 'leaseDuration (20000 ms) must be at least twice heartbeatPeriod (10001 ms)' },
  { input: 'negative leaseDuration', action: (b) => b.client({ leaseDuration: -1 }), error: InvalidArgumentError, code: 'INVALID_DURATION', message: 'leaseDuration must be a whole number of milliseconds ≥ 1 and ≤ 2147483647 (about 24.8 days), got -1' },
  { input: 'zero leaseDuration', action: (b) => b.client({ leaseDuration: 0 }), error: InvalidArgumentError, code: 'INVALID_DURATION', message: 'leaseDuration must be a whole number of milliseconds ≥ 1 and ≤ 2147483647 (about 24.8 days), got 0' },
  { input: 'clockBound without maxSkew', action: (b) => b.client({ clockBound: {} as { maxSkew: number } }), error: InvalidArgumentError, code: 'INVALID_DURATION', message: 'clockBound.maxSkew must be a whole number of milliseconds ≥ 0' },
  { input: 'clockBound with a negative maxSkew', action: (b) => b.client({ clockBound: { maxSkew: -1 } }), error: InvalidArgumentError, code: 'INVALID_DURATION', message: 'got -1' },
  { input: 'clockBound with a clock that has no wall clock', action: (b) => b.client({ clockBound: { maxSkew: 100 }, clock: { now: () => performance.now() } }), error: InvalidArgumentError, code: 'CONFLICTING_OPTIONS', message: 'clockBound needs a clock with wallNow()' },
  { input: 'clockBound that is not an object', action: (b) => b.client({ clockBound: 100 as unknown as { maxSkew: number } }), error: InvalidArgumentError, code: 'INVALID_OPTION', message: 'clockBound must be an object' },
  { input: "partitionKeyName 'rvnWrittenAt', the clock stamp", action: (b) => b.client({ partitionKeyName: 'rvnWrittenAt' }), error: InvalidArgumentError, code: 'RESERVED_ATTRIBUTE', message: 'partitionKeyName "rvnWrittenAt" is an attribute every lock item carries' },
  { input: 'fractional leaseDuration', action: (b) => b.client({ leaseDuration: 1500.5 }), error: InvalidArgumentError, code: 'INVALID_DURATION', message: 'got 1500.5' },
  { input: 'NaN leaseDuration', action: (b) => b.client({ leaseDuration: Number.NaN }), error: InvalidArgumentError, code: 'INVALID_DURATION', message: 'got NaN' },
  { input: 'infinite leaseDuration', action: (b) => b.client({ leaseDuration: Infinity }), error: InvalidArgumentError, code: 'INVALID_DURATION', message: 'got Infinity' },
  { input: 'leaseDuration as a string', action: (b) => b.client({ leaseDuration: '2000' as unknown as number }), error: InvalidArgumentError, code: 'INVALID_DURATION', message: 'leaseDuration must be a whole number' },
  { input: 'negative heartbeatPeriod', action: (b) => b.client({ heartbeatPeriod: -500 }), error: InvalidArgumentError, code: 'INVALID_DURATION', message: 'heartbeatPeriod must be a whole number of milliseconds ≥ 1 and ≤ 2147483647 (about 24.8 days), got -500' },
  { input: 'fractional heartbeatPeriod', action: (b) => b.client({ heartbeatPeriod: 0.5 }), error: InvalidArgumentError, code: 'INVALID_DURATION', message: 'heartbeatPeriod must be a whole number of milliseconds ≥ 1 and ≤ 2147483647 (about 24.8 days), got 0.5' },
  { input: 'zero heartbeatConcurrency', action: (b) => b.client({ heartbeatConcurrency: 0 }), error: InvalidArgumentError, code: 'INVALID_OPTION', message: 'heartbeatConcurrency must be a whole number ≥ 1, got 0' },
  { input: 'empty tableName', action: (b) => b.client({ tableName: '' }), error: InvalidArgumentError, code: 'INVALID_OPTION', message: "tableName must be 3 to 255 characters of A-Z, a-z, 0-9, '_', '-' and '.'" },
  { input: 'tableName DynamoDB would refuse', action: (b) => b.client({ tableName: 'no spaces' }), error: InvalidArgumentError, code: 'INVALID_OPTION', message: 'got "no spaces"' },
  { input: 'empty ownerName', action: (b) => b.client({ ownerName: '' }), error: InvalidArgumentError, code: 'INVALID_OPTION', message: 'ownerName must be a non-empty string' },
  { input: 'ownerName with a lone surrogate', action: (b) => b.client({ ownerName: 'host\ud800' }), error: InvalidArgumentError, code: 'INVALID_OPTION', message: 'ownerName must be well-formed UTF-16 (it has a lone surrogate)' },
  { input: "partitionKeyName 'ownerName', a protocol attribute", action: (b) => b.client({ partitionKeyName: 'ownerName' }), error: InvalidArgumentError, code: 'RESERVED_ATTRIBUTE', message: 'partitionKeyName "ownerName" is an attribute every lock item carries' },
  { input: "sortKeyName 'recordVersionNumber', a protocol attribute", action: (b) => b.client({ sortKeyName: 'recordVersionNumber' }), error: InvalidArgumentError, code: 'RESERVED_ATTRIBUTE', message: 'sortKeyName "recordVersionNumber" is an attribute every lock item carries' },
  { input: 'leaseDuration over 2^31 - 1 ms', action: (b) => b.client({ leaseDuration: 2 ** 31 }), error: InvalidArgumentError, code: 'INVALID_DURATION', message: 'got 2147483648' },
  { input: "partitionKeyName 'fencingToken' with fencingTableName", action: (b) => b.client({ partitionKeyName: 'fencingToken', fencingTableName: 'fences' }), error: InvalidArgumentError, code: 'RESERVED_ATTRIBUTE', message: 'partitionKeyName "fencingToken" is an attribute every fencing item carries' },
  { input: "sortKeyName 'fencingToken' with fencingTableName", action: (b) => b.client({ sortKeyName: 'fencingToken', fencingTableName: 'fences' }), error: InvalidArgumentError, code: 'RESERVED_ATTRIBUTE', message: 'sortKeyName "fencingToken" is an attribute every fencing item carries' },
  { input: 'sortKeyName equal to partitionKeyName', action: (b) => b.client({ sortKeyName: 'key' }), error: InvalidArgumentError, code: 'CONFLICTING_OPTIONS', message: 'partitionKeyName and sortKeyName must differ' },
  { input: 'neither dynamoDB nor dynamoDBConfig', action: () => new LockClient({ tableName: 'locks' } as never), error: InvalidArgumentError, code: 'INVALID_OPTION', message: 'Pass either dynamoDB (a DynamoDBClient) or dynamoDBConfig' },

  // ── Acquire options ──────────────────────────────────────────────────────
  { input: 'refreshPeriod of 0 ms', action: (b) => b.hash.acquirePermit('s', { permits: 2, refreshPeriod: 0 }), error: InvalidArgumentError, code: 'INVALID_DURATION', message: 'refreshPeriod must be a whole number of milliseconds ≥ 10 and ≤ 2147483647 (about 24.8 days), got 0' },
  { input: 'negative refreshPeriod', action: (b) => b.hash.acquireLock('k', { refreshPeriod: -1 }), error: InvalidArgumentError, code: 'INVALID_DURATION', message: 'refreshPeriod must be a whole number of milliseconds ≥ 10 and ≤ 2147483647 (about 24.8 days), got -1' },
  { input: 'fractional refreshPeriod', action: (b) => b.hash.acquireLock('k', { refreshPeriod: 0.25 }), error: InvalidArgumentError, code: 'INVALID_DURATION', message: 'refreshPeriod must be a whole number of milliseconds ≥ 10 and ≤ 2147483647 (about 24.8 days), got 0.25' },
  { input: 'infinite refreshPeriod', action: (b) => b.hash.acquireLock('k', { refreshPeriod: Infinity }), error: InvalidArgumentError, code: 'INVALID_DURATION', message: 'refreshPeriod must be a whole number of milliseconds ≥ 10 and ≤ 2147483647 (about 24.8 days), got Infinity' },
  { input: 'negative turnLength', action: (b) => b.hash.acquireLock('k', { turnLength: -1 }), error: InvalidArgumentError, code: 'INVALID_DURATION', message: 'turnLength must be a whole number of milliseconds ≥ 0 and ≤ 2147483647 (about 24.8 days) (or Infinity), got -1' },
  { input: 'NaN turnLength', action: (b) => b.hash.tryAcquireLock('k', { turnLength: NaN }), error: InvalidArgumentError, code: 'INVALID_DURATION', message: 'got NaN' },
  { input: 'negative additionalTimeToWaitForLock', action: (b) => b.hash.acquireLock('k', { additionalTimeToWaitForLock: -10 }), error: InvalidArgumentError, code: 'INVALID_DURATION', message: 'additionalTimeToWaitForLock must be a whole number of milliseconds ≥ 0 and ≤ 2147483647 (about 24.8 days) (or Infinity), got -10' },
  { input: 'fractional additionalTimeToWaitForLock', action: (b) => b.hash.tryAcquireLock('k', { additionalTimeToWaitForLock: 1.5 }), error: InvalidArgumentError, code: 'INVALID_DURATION', message: 'got 1.5' },
  { input: 'zero acquire leaseDuration', action: (b) => b.hash.acquireLock('k', { leaseDuration: 0 }), error: InvalidArgumentError, code: 'INVALID_DURATION', message: 'leaseDuration must be a whole number of milliseconds ≥ 1 and ≤ 2147483647 (about 24.8 days), got 0' },
  { input: 'negative acquire leaseDuration', action: (b) => b.hash.acquireLock('k', { leaseDuration: -2000 }), error: InvalidArgumentError, code: 'INVALID_DURATION', message: 'got -2000' },
  { input: 'fractional acquire leaseDuration', action: (b) => b.hash.acquireLock('k', { leaseDuration: 2000.5 }), error: InvalidArgumentError, code: 'INVALID_DURATION', message: 'got 2000.5' },

  { input: 'acquire leaseDuration under twice heartbeatPeriod (400 with 500)', action: (b) => b.hash.acquireLock('k', { leaseDuration: 400 }), error: InvalidArgumentError, code: 'LEASE_TOO_SHORT', message: 'leaseDuration (400 ms) must be at least twice heartbeatPeriod (500 ms)' },
  { input: 'acquire leaseDuration just under twice heartbeatPeriod (999 with 500)', action: (b) => b.hash.tryAcquireLock('k', { leaseDuration: 999 }), error: InvalidArgumentError, code: 'LEASE_TOO_SHORT', message: 'leaseDuration (999 ms) must be at least twice heartbeatPeriod (500 ms)' },
  { input: 'sendHeartbeat leaseDuration under twice heartbeatPeriod', action: async (b) => (await b.held()).sendHeartbeat({ leaseDuration: 600 }), error: InvalidArgumentError, code: 'LEASE_TOO_SHORT', message: 'leaseDuration (600 ms) must be at least twice heartbeatPeriod (500 ms)' },

  // ── Session monitor: safe time must lie strictly inside (heartbeatPeriod, lease) ──
  ...[HEARTBEAT, LEASE, 100, 5_000, -1, Number.NaN].map(
    (safe): Row => ({
      input: `sessionMonitor safe time ${safe} outside (${HEARTBEAT}, ${LEASE})`,
      action: (b) => b.hash.acquireLock('k', { sessionMonitor: { safeTimeWithoutHeartbeat: safe } }),
      error: InvalidArgumentError,
      code: 'INVALID_SESSION_MONITOR',
      message: `sessionMonitor.safeTimeWithoutHeartbeat (${safe} ms) must be greater than heartbeatPeriod (${HEARTBEAT} ms) and less than the lease (${LEASE} ms)`,
    }),
  ),
  {
    input: 'sessionMonitor safe time beyond this acquisition’s own shorter lease',
    action: (b) => b.hash.acquireLock('k', { leaseDuration: 1_200, sessionMonitor: { safeTimeWithoutHeartbeat: 1_500 } }),
    error: InvalidArgumentError,
    code: 'INVALID_SESSION_MONITOR',
    message: 'less than the lease (1200 ms)',
  },
  ...[{ remainingMs: Number.NaN }, { remainingMs: Infinity }, { at: 5, remainingMs: 5 }, {}, 'soon'].map(
    (invocationDeadline): Row => ({
      input: `invocationDeadline ${JSON.stringify(invocationDeadline)}`,
      action: (b) => b.hash.acquireLock('k', { invocationDeadline } as never),
      error: InvalidArgumentError,
      code: 'INVALID_DEADLINE',
      message: 'invocationDeadline must be',
    }),
  ),
  ...[-1, 0, LEASE / 10].map(
    (remainingMs): Row => ({
      input: `invocationDeadline ${remainingMs} ms away, not beyond the safety margin`,
      action: (b) => b.hash.acquireLock('k', { invocationDeadline: { remainingMs } }),
      error: InvalidArgumentError,
      code: 'DEADLINE_TOO_SOON',
      message: `a lock needs more than its safety margin (${LEASE / 10} ms) of it`,
    }),
  ),
  {
    input: 'invocationDeadline with a negative kill overrun',
    action: (b) => b.hash.acquireLock('k', { invocationDeadline: { remainingMs: 10_000, killOverrunMs: -1 } }),
    error: InvalidArgumentError,
    code: 'INVALID_DURATION',
    message: 'invocationDeadline.killOverrunMs must be a whole number',
  },

  // ── Operations on a held lock ────────────────────────────────────────────
  { input: 'sendHeartbeat with both data and deleteData', action: async (b) => b.hash.sendHeartbeat(await b.held(), { data: 'x', deleteData: true }), error: InvalidArgumentError, code: 'CONFLICTING_OPTIONS', message: 'sendHeartbeat: pass data or deleteData, not both' },
  { input: 'Lock#sendHeartbeat with both data and deleteData', action: async (b) => (await b.held()).sendHeartbeat({ data: new Uint8Array([1]), deleteData: true }), error: InvalidArgumentError, code: 'CONFLICTING_OPTIONS', message: 'pass data or deleteData, not both' },
  { input: 'sendHeartbeat with a negative leaseDuration', action: async (b) => b.hash.sendHeartbeat(await b.held(), { leaseDuration: -1 }), error: InvalidArgumentError, code: 'INVALID_DURATION', message: 'leaseDuration must be a whole number of milliseconds ≥ 1 and ≤ 2147483647 (about 24.8 days), got -1' },
  { input: 'sendHeartbeat with a fractional leaseDuration', action: async (b) => b.hash.sendHeartbeat(await b.held(), { leaseDuration: 1000.5 }), error: InvalidArgumentError, code: 'INVALID_DURATION', message: 'got 1000.5' },
  { input: 'sendHeartbeat with a leaseDuration over 2^31 - 1 ms', action: async (b) => b.hash.sendHeartbeat(await b.held(), { leaseDuration: 2 ** 31 }), error: InvalidArgumentError, code: 'INVALID_DURATION', message: 'got 2147483648' },
  { input: 'releaseLock with data and deleteLock: true', action: async (b) => b.hash.releaseLock(await b.held(), { data: 'x', deleteLock: true }), error: InvalidArgumentError, code: 'CONFLICTING_OPTIONS', message: 'releaseLock: data can only be left on a lock released with deleteLock: false' },
  { input: 'releaseLock with data on a lock that deletes on release', action: async (b) => (await b.held()).release({ data: 'x' }), error: InvalidArgumentError, code: 'CONFLICTING_OPTIONS', message: 'deleteLock: false' },
  { input: 'releaseLock of a lock acquired by another client', action: async (b) => b.hash.releaseLock(await b.held(b.client())), error: InvalidArgumentError, code: 'INVALID_OPTION', message: 'This lock was not acquired by this client' },
  { input: 'sendHeartbeat of something that is not a Lock', action: (b) => b.hash.sendHeartbeat(NOT_A_LOCK), error: InvalidArgumentError, code: 'INVALID_OPTION', message: 'This lock was not acquired by this client' },

  // ── acquireLocks ─────────────────────────────────────────────────────────
  { input: 'acquireLocks with no keys', action: (b) => b.hash.acquireLocks([]), error: InvalidArgumentError, code: 'INVALID_GROUP', message: 'acquireLocks needs at least one key' },
  { input: 'acquireLocks with 101 keys', action: (b) => b.hash.acquireLocks(Array.from({ length: 101 }, (_, i) => `k${i}`)), error: InvalidArgumentError, code: 'INVALID_GROUP', message: 'acquireLocks takes at most 100 keys, got 101' },
  { input: 'acquireLocks with 51 keys on a fencing client', action: (b) => b.client({ fencingTableName: 'fence' }).acquireLocks(Array.from({ length: 51 }, (_, i) => `k${i}`)), error: InvalidArgumentError, code: 'INVALID_GROUP', message: 'at most 50 keys with fencing' },
  { input: 'acquireLocks with an empty key', action: (b) => b.hash.acquireLocks(['a', '']), error: InvalidArgumentError, code: 'EMPTY_KEY', message: 'The partition key must not be empty' },
  { input: 'acquireLocks with a null key', action: (b) => b.hash.acquireLocks([null as unknown as string, 'b']), error: InvalidArgumentError, code: 'EMPTY_KEY', message: 'got null' },
  { input: 'acquireLocks with an undefined key', action: (b) => b.hash.acquireLocks([undefined as unknown as string, 'b']), error: InvalidArgumentError, code: 'EMPTY_KEY', message: 'got undefined' },
  // eslint-disable-next-line no-sparse-arrays -- the hole is the input under test
  { input: 'acquireLocks with a hole in a sparse array', action: (b) => b.hash.acquireLocks(['a', , 'b'] as string[]), error: InvalidArgumentError, code: 'EMPTY_KEY', message: 'got undefined' },
  { input: 'acquireLocks with a key object whose partition key is null', action: (b) => b.hash.acquireLocks([{ partitionKey: null as unknown as string }, 'b']), error: InvalidArgumentError, code: 'EMPTY_KEY', message: 'The partition key must be a string, got null' },
  { input: 'acquireLocks with data of 400 KiB', action: (b) => b.hash.acquireLocks(['a', 'b'], { data: new Uint8Array(MAX_ITEM) }), error: InvalidArgumentError, code: 'ITEM_TOO_LARGE', message: 'DynamoDB allows at most 409600' },
  { input: 'acquireLocks with one key twice', action: (b) => b.sort.acquireLocks([{ partitionKey: 'p', sortKey: 's' }, { partitionKey: 'p', sortKey: 's' }]), error: InvalidArgumentError, code: 'INVALID_GROUP', message: 'acquireLocks got the key "p"/"s" twice' },
  { input: 'acquireLocks whose items exceed 4 MB together', action: (b) => b.hash.acquireLocks(Array.from({ length: 11 }, (_, i) => `k${i}`), { data: new Uint8Array(390 * KIB) }), error: InvalidArgumentError, code: 'ITEM_TOO_LARGE', message: 'DynamoDB allows at most 4194304 in one transaction' },
  { input: 'acquireLocks with a key this client holds', action: async (b) => b.hash.acquireLocks(['free', (await b.held()).partitionKey]), error: InvalidArgumentError, code: 'LOCK_ALREADY_HELD', message: 'a group never takes a lock its client holds' },

  // ── Options that are not an object, or that the call does not take ──────
  { input: 'acquireLock with null options', action: (b) => b.hash.acquireLock('a', null as never), error: InvalidArgumentError, code: 'INVALID_OPTION', message: 'acquireLock: its options must be an object, got null' },
  { input: 'acquireLock with a misspelt option', action: (b) => b.hash.acquireLock('a', { leaseDurration: 5_000 } as never), error: InvalidArgumentError, code: 'INVALID_OPTION', message: 'acquireLock takes no option "leaseDurration"; it takes sortKey, data,' },
  { input: 'tryAcquireLock with a misspelt option', action: (b) => b.hash.tryAcquireLock('a', { reentrent: true } as never), error: InvalidArgumentError, code: 'INVALID_OPTION', message: 'tryAcquireLock takes no option "reentrent"' },
  { input: 'acquireLocks with invocationDeadline (acquireLock only)', action: (b) => b.hash.acquireLocks(['a', 'b'], { invocationDeadline: { remainingMs: 9_000 } } as never), error: InvalidArgumentError, code: 'INVALID_OPTION', message: 'acquireLocks takes no option "invocationDeadline"' },
  { input: 'acquireLocks with shouldSkipBlockingWait (acquireLock only)', action: (b) => b.hash.acquireLocks(['a', 'b'], { shouldSkipBlockingWait: true } as never), error: InvalidArgumentError, code: 'INVALID_OPTION', message: 'acquireLocks takes no option "shouldSkipBlockingWait"' },
  { input: 'acquirePermit with count (acquirePermits only)', action: (b) => b.hash.acquirePermit('pool', { permits: 3, count: 2 } as never), error: InvalidArgumentError, code: 'INVALID_OPTION', message: 'acquirePermit takes no option "count"' },
  { input: 'adoptLock with null options', action: (b) => b.hash.adoptLock('{}', null as never), error: InvalidArgumentError, code: 'INVALID_OPTION', message: 'adoptLock: its options must be an object, got null' },
  { input: 'withLock with a misspelt option', action: (b) => b.hash.withLock('a', () => undefined, { releaseTimout: 10 } as never), error: InvalidArgumentError, code: 'INVALID_OPTION', message: 'withLock takes no option "releaseTimout"' },

  // ── A closed client ──────────────────────────────────────────────────────
  {
    input: 'acquireLock on a closed client',
    action: async (b) => {
      const client = b.client();
      await client.close();
      return client.acquireLock('k');
    },
    error: LockClientClosedError,
    message: 'The lock client is closed',
  },
];

describe('bad input is refused locally: typed error, clear message, no request sent', () => {
  test.each(localRows)('$input', async (row) => {
    const b = bench();
    const error = await failureOf(() => row.action(b));

    expect(error).toBeInstanceOf(row.error);
    if (row.code !== undefined) expect((error as InvalidArgumentError).code).toBe(row.code);
    if (typeof row.message === 'string') expect((error as Error).message).toContain(row.message);
    else expect((error as Error).message).toMatch(row.message);
    expect(b.sentByAction()).toEqual([]);
    // A refused call on a held lock leaves it held.
    for (const lock of b.locks) expect(lock.state).toBe('held');
  });
});

describe('the limits are DynamoDB’s own: input just inside them is accepted end to end', () => {
  test.each([
    { what: '2048 ASCII bytes', key: 'a'.repeat(2048) },
    { what: "682 × '€' (2046 bytes)", key: '€'.repeat(682) },
    { what: "512 × '😀' (2048 bytes)", key: '😀'.repeat(512) },
  ])('partition key of $what', async ({ key }) => {
    const b = bench();
    const lock = await b.hash.acquireLock(key, { additionalTimeToWaitForLock: 0 });
    expect(await rawItem(hashTable, { key: { S: key } })).toMatchObject({ ownerName: { S: b.hash.ownerName } });
    expect(await lock.release()).toBe(true);
  });

  test('sort key of 1024 bytes (341 × "€" + "x")', async () => {
    const sortKey = '€'.repeat(341) + 'x';
    expect(utf8Length(sortKey)).toBe(1024);
    const b = bench();
    const lock = await b.sort.acquireLock('k', { sortKey, additionalTimeToWaitForLock: 0 });
    expect((await rawItem(sortTable, { key: { S: 'k' }, sortKey: { S: sortKey } }))?.['sortKey']).toEqual({ S: sortKey });
    expect(await lock.release()).toBe(true);
  });

  test('an item of exactly 409600 bytes', async () => {
    const b = bench();
    const key = `exact-${randomUUID()}`;
    const dataBytes = MAX_ITEM - itemSizeWithData(key, b.hash.ownerName, 0);
    expect(itemSizeWithData(key, b.hash.ownerName, dataBytes)).toBe(MAX_ITEM);
    const lock = await b.hash.acquireLock(key, { data: new Uint8Array(dataBytes).fill(7), additionalTimeToWaitForLock: 0 });
    expect((await rawItem(hashTable, { key: { S: key } }))?.['data']?.B?.byteLength).toBe(dataBytes);
    expect(await lock.release()).toBe(true);
  });

  test('heartbeatPeriod of exactly half the lease is allowed', async () => {
    const b = bench();
    const client = b.client({ leaseDuration: 1_000, heartbeatPeriod: 500 });
    const lock = await client.acquireLock(`half-${randomUUID()}`, { additionalTimeToWaitForLock: 0 });
    expect(lock.state).toBe('held');
  });

  test('heartbeatPeriod over half the lease is allowed with backgroundHeartbeats: false', async () => {
    const b = bench();
    const client = b.client({ leaseDuration: 1_000, heartbeatPeriod: 900, backgroundHeartbeats: false });
    const key = `manual-${randomUUID()}`;
    const lock = await client.acquireLock(key, { additionalTimeToWaitForLock: 0 });
    const first = lock.recordVersionNumber;
    await sleep(1_200);
    // No background heartbeat ran: the RVN in the table is still the acquisition's.
    expect((await rawItem(hashTable, { key: { S: key } }))?.['recordVersionNumber']).toEqual({ S: first });
    expect(await lock.release()).toBe(true);
  });

  test('a per-lock lease of exactly twice heartbeatPeriod is allowed, a shorter one with backgroundHeartbeats: false', async () => {
    const b = bench();
    // Long periods, so that a loaded machine cannot make the locks lapse between the calls.
    const background = b.client({ leaseDuration: 20_000, heartbeatPeriod: 2_500 });
    const lock = await background.acquireLock(`twice-${randomUUID()}`, { leaseDuration: 5_000, additionalTimeToWaitForLock: 0 });
    expect(lock.leaseDuration).toBe(5_000);
    await lock.sendHeartbeat({ leaseDuration: 5_000 });
    const manual = b.client({ leaseDuration: 20_000, heartbeatPeriod: 5_000, backgroundHeartbeats: false });
    const short = await manual.acquireLock(`short-${randomUUID()}`, { leaseDuration: 4_000, additionalTimeToWaitForLock: 0 });
    expect((await rawItem(hashTable, { key: { S: short.partitionKey } }))?.['leaseDuration']).toEqual({ S: '4000' });
    await short.sendHeartbeat({ leaseDuration: 3_000 });
    expect(await short.release()).toBe(true);
    expect(await lock.release()).toBe(true);
  });

  test('additionalTimeToWaitForLock may be Infinity', async () => {
    const b = bench();
    const lock = await b.hash.acquireLock(`inf-${randomUUID()}`, { additionalTimeToWaitForLock: Infinity });
    expect(await lock.release()).toBe(true);
  });
});

/** Bad data on heartbeats and releases, and bad additional attributes: refused before any call. */
describe('bad input on heartbeat, release and additional attributes', () => {
  test('sendHeartbeat with data that makes the item exceed 400 KB fails ITEM_TOO_LARGE without a call', async () => {
    const b = bench();
    const lock = await b.held();
    const error = await failureOf(() => lock.sendHeartbeat({ data: new Uint8Array(MAX_ITEM) }));
    expect(b.sentByAction()).toEqual([]);
    expect(error).toBeInstanceOf(InvalidArgumentError);
    expect((error as InvalidArgumentError).code).toBe('ITEM_TOO_LARGE');
    expect(lock.state).toBe('held');
  });

  test('releaseLock({ deleteLock: false, data }) over 400 KB fails ITEM_TOO_LARGE without a call and the lock stays held', async () => {
    const b = bench();
    const lock = await b.held();
    const error = await failureOf(() => lock.release({ deleteLock: false, data: new Uint8Array(MAX_ITEM) }));
    const stored = await rawItem(hashTable, { key: { S: lock.partitionKey } });
    expect({
      sent: b.sentByAction(),
      error: (error as Error).name,
      code: (error as InvalidArgumentError).code,
      state: lock.state,
      storedOwner: stored?.['ownerName']?.S,
    }).toEqual({ sent: [], error: 'InvalidArgumentError', code: 'ITEM_TOO_LARGE', state: 'held', storedOwner: b.hash.ownerName });
  });

  test.each([
    { what: 'a number (42)', data: 42 },
    { what: 'a plain object', data: { bytes: [1, 2] } },
    { what: 'an array of numbers', data: [1, 2, 300] },
  ])('sendHeartbeat with data that is $what is refused with INVALID_OPTION, as acquireLock does', async ({ data }) => {
    const b = bench();
    const lock = await b.held();
    const outcome = await lock.sendHeartbeat({ data: data as unknown as string }).then(
      async () =>
        `the heartbeat was sent and stored data ${JSON.stringify(Array.from((await rawItem(hashTable, { key: { S: lock.partitionKey } }))?.['data']?.B ?? []))}`,
      (error: unknown) => error,
    );
    expect(outcome).toBeInstanceOf(InvalidArgumentError);
    expect((outcome as InvalidArgumentError).code).toBe('INVALID_OPTION');
    expect(b.sentByAction()).toEqual([]);
  });

  test('releaseLock({ deleteLock: false }) with data that is a number is refused and the lock stays held', async () => {
    const b = bench();
    const lock = await b.held();
    const outcome = await lock.release({ deleteLock: false, data: 42 as unknown as string }).then(
      async () =>
        `the release was sent and left data of ${(await rawItem(hashTable, { key: { S: lock.partitionKey } }))?.['data']?.B?.byteLength} bytes`,
      (error: unknown) => error,
    );
    expect(outcome).toBeInstanceOf(InvalidArgumentError);
    expect(lock.state).toBe('held');
  });

  test.each([
    { what: 'an empty attribute name', attributes: { '': 'x' } },
    {
      what: 'a value nested 40 levels deep (DynamoDB allows 32)',
      attributes: { deep: Array.from({ length: 40 }).reduce<unknown>((inner) => ({ inner }), 'x') as Record<string, unknown> },
    },
  ])('additional attributes with $what are refused with INVALID_ATTRIBUTE_VALUE before any call', async ({ attributes }) => {
    const b = bench();
    const error = await failureOf(() =>
      b.hash.acquireLock(`attr-${randomUUID()}`, { additionalAttributes: attributes, additionalTimeToWaitForLock: 0 }),
    );
    expect({ name: (error as Error).name, code: (error as InvalidArgumentError).code, sent: b.sentByAction() }).toEqual({
      name: 'InvalidArgumentError',
      code: 'INVALID_ATTRIBUTE_VALUE',
      sent: [],
    });
  });
});

// ── Errors that need DynamoDB's answer ──────────────────────────────────────

interface TableRow {
  readonly input: string;
  /** Client settings (table: 'missing' → a table that does not exist). */
  readonly settings: Partial<LockClientSettings> & { table: 'hash' | 'sort' | 'missing' };
  readonly action: (client: LockClient) => unknown;
  readonly error: ErrorClass;
  readonly message: string | RegExp;
}

const acquire = (sortKey?: string) => (client: LockClient) =>
  client.acquireLock(`k-${randomUUID()}`, { sortKey, additionalTimeToWaitForLock: 0, refreshPeriod: 10 });

const tableRows: TableRow[] = [
  ...(
    [
      ['acquireLock', acquire()],
      ['tryAcquireLock', (c: LockClient) => c.tryAcquireLock('k', { additionalTimeToWaitForLock: 0 })],
      ['acquireLock with shouldSkipBlockingWait', (c: LockClient) => c.acquireLock('k', { shouldSkipBlockingWait: true })],
      ['getLock', (c: LockClient) => c.getLock('k')],
      ['getAllLocks', (c: LockClient) => drain(c.getAllLocks())],
      ['getLocksByPartitionKey', (c: LockClient) => drain(c.getLocksByPartitionKey('k'))],
      ['assertLockTableExists', (c: LockClient) => c.assertLockTableExists()],
    ] as const
  ).map(([name, action]): TableRow => ({
    input: `${name} on a table that does not exist`,
    settings: { table: 'missing' },
    action,
    error: LockTableDoesNotExistError,
    message: /^Lock table "missing-table-.*" does not exist or is not active$/,
  })),
  {
    input: 'acquireLock with another partitionKeyName than the table’s',
    settings: { table: 'hash', partitionKeyName: 'lockName' },
    action: acquire(),
    error: LockTableSchemaMismatchError,
    message: /^The client's partitionKeyName "lockName" does not match lock table ".*", whose partition key is "key"/,
  },
  {
    input: 'assertLockTableExists with another partitionKeyName than the table’s',
    settings: { table: 'hash', partitionKeyName: 'lockName' },
    action: (c) => c.assertLockTableExists(),
    error: LockTableSchemaMismatchError,
    message: /^The client's partitionKeyName "lockName" does not match lock table ".*", whose partition key is "key"/,
  },
  {
    input: 'getLock with another partitionKeyName than the table’s',
    settings: { table: 'hash', partitionKeyName: 'lockName' },
    action: (c) => c.getLock('k'),
    error: LockTableSchemaMismatchError,
    message: 'partitionKeyName "lockName" does not match lock table',
  },
  {
    input: 'acquireLock with sortKeyName on a hash-only table',
    settings: { table: 'hash', sortKeyName: 'sortKey' },
    action: acquire('s'),
    error: LockTableSchemaMismatchError,
    message: /^The client's sortKeyName "sortKey" does not match lock table ".*", which has no sort key/,
  },
  {
    input: 'assertLockTableExists with sortKeyName on a hash-only table',
    settings: { table: 'hash', sortKeyName: 'sortKey' },
    action: (c) => c.assertLockTableExists(),
    error: LockTableSchemaMismatchError,
    message: /^The client's sortKeyName "sortKey" does not match lock table ".*", which has no sort key/,
  },
  {
    input: 'acquireLock without sortKeyName on a sort-key table',
    settings: { table: 'sort' },
    action: acquire(),
    error: LockTableSchemaMismatchError,
    message: /^The client has no sortKeyName, but lock table ".*" has sort key "sortKey"/,
  },
  {
    input: 'assertLockTableExists without sortKeyName on a sort-key table',
    settings: { table: 'sort' },
    action: (c) => c.assertLockTableExists(),
    error: LockTableSchemaMismatchError,
    message: /^The client has no sortKeyName, but lock table ".*" has sort key "sortKey"/,
  },
  {
    input: 'acquireLock with another sortKeyName than the table’s',
    settings: { table: 'sort', sortKeyName: 'rangeKey' },
    action: acquire('s'),
    error: LockTableSchemaMismatchError,
    message: /^The client's sortKeyName "rangeKey" does not match lock table ".*", whose sort key is "sortKey"/,
  },
];

describe('errors about the table are typed and nothing is written', () => {
  test.each(tableRows)('$input', async (row) => {
    const b = bench();
    const { table, ...settings } = row.settings;
    const tableName = table === 'missing' ? uniqueTableName('missing-table') : table === 'hash' ? hashTable : sortTable;
    const client = b.client({ tableName, ...settings });
    const error = await failureOf(() => row.action(client));

    expect(error).toBeInstanceOf(row.error);
    if (typeof row.message === 'string') expect((error as Error).message).toContain(row.message);
    else expect((error as Error).message).toMatch(row.message);
    expect((error as LockTableDoesNotExistError).tableName).toBe(tableName);
    expect(b.writesBesidesNewLockPuts()).toEqual([]);
  });

  test('lockTableExists is false for a table that does not exist, true for the lock tables', async () => {
    const b = bench();
    expect(await b.client({ tableName: uniqueTableName('missing-table') }).lockTableExists()).toBe(false);
    expect(await b.hash.lockTableExists()).toBe(true);
    expect(await b.sort.lockTableExists()).toBe(true);
    await expect(b.hash.assertLockTableExists()).resolves.toBeUndefined();
    await expect(b.sort.assertLockTableExists()).resolves.toBeUndefined();
  });
});

// ── Malformed items ────────────────────────────────────────────────────────

interface MalformedRow {
  readonly input: string;
  /** The stored item without its key. */
  readonly item: Item;
  readonly attribute: string;
  readonly message: string;
}

const RVN = '0b6f9d3e-8a57-4c1e-9f55-6b1a0c2d3e4f';
const good: Item = { ownerName: { S: 'someone' }, leaseDuration: { S: '2000' }, recordVersionNumber: { S: RVN } };
const without = (name: string): Item => Object.fromEntries(Object.entries(good).filter(([n]) => n !== name));

// A table, one case a line.
// prettier-ignore
const malformedRows: MalformedRow[] = [
  { input: 'leaseDuration stored as N', item: { ...good, leaseDuration: { N: '2000' } }, attribute: 'leaseDuration', message: 'attribute "leaseDuration" must be a string (S), got N' },
  { input: 'ownerName missing', item: without('ownerName'), attribute: 'ownerName', message: 'attribute "ownerName" is missing' },
  { input: 'recordVersionNumber missing', item: without('recordVersionNumber'), attribute: 'recordVersionNumber', message: 'attribute "recordVersionNumber" is missing' },
  { input: 'leaseDuration missing', item: without('leaseDuration'), attribute: 'leaseDuration', message: 'attribute "leaseDuration" is missing' },
  { input: 'leaseDuration not a number', item: { ...good, leaseDuration: { S: 'twenty seconds' } }, attribute: 'leaseDuration', message: 'attribute "leaseDuration" must be a decimal integer of milliseconds, got "twenty seconds"' },
  { input: 'leaseDuration fractional', item: { ...good, leaseDuration: { S: '1.5' } }, attribute: 'leaseDuration', message: 'attribute "leaseDuration" must be a decimal integer of milliseconds, got "1.5"' },
  { input: 'leaseDuration beyond a Java long', item: { ...good, leaseDuration: { S: '9223372036854775808' } }, attribute: 'leaseDuration', message: 'attribute "leaseDuration" must be a decimal integer of milliseconds, got "9223372036854775808"' },
  { input: 'ownerName stored as N', item: { ...good, ownerName: { N: '7' } }, attribute: 'ownerName', message: 'attribute "ownerName" must be a string (S), got N' },
  { input: 'recordVersionNumber stored as B', item: { ...good, recordVersionNumber: { B: new Uint8Array([1]) } }, attribute: 'recordVersionNumber', message: 'attribute "recordVersionNumber" must be a string (S), got B' },
  { input: 'data stored as S', item: { ...good, data: { S: 'not bytes' } }, attribute: 'data', message: 'attribute "data" must be binary (B), got S' },
  { input: 'released item without ownerName', item: { ...without('ownerName'), isReleased: { S: '1' } }, attribute: 'ownerName', message: 'attribute "ownerName" is missing' },
];

describe('a malformed item is reported, never treated as free, never overwritten', () => {
  test.each(malformedRows)('$input', async (row) => {
    const b = bench();
    const partitionKey = `malformed-${randomUUID()}`;
    const stored: Item = { key: { S: partitionKey }, ...row.item };
    await raw.send(new PutItemCommand({ TableName: hashTable, Item: stored }));

    const calls: Array<[string, () => unknown]> = [
      ['acquireLock', () => b.hash.acquireLock(partitionKey, { additionalTimeToWaitForLock: 300, refreshPeriod: 50 })],
      ['tryAcquireLock', () => b.hash.tryAcquireLock(partitionKey, { additionalTimeToWaitForLock: 0 })],
      ['shouldSkipBlockingWait', () => b.hash.acquireLock(partitionKey, { shouldSkipBlockingWait: true })],
      [
        'acquireOnlyIfLockAlreadyExists',
        () => b.hash.acquireLock(partitionKey, { acquireOnlyIfLockAlreadyExists: true, updateExistingLockRecord: true }),
      ],
      ['getLock', () => b.hash.getLock(partitionKey)],
      ['getLocksByPartitionKey', () => drain(b.hash.getLocksByPartitionKey(partitionKey))],
    ];
    for (const [name, call] of calls) {
      const error = await failureOf(call);
      expect({ name, error }).toEqual({ name, error: expect.any(MalformedLockItemError) });
      expect((error as MalformedLockItemError).attribute).toBe(row.attribute);
      expect((error as Error).message).toBe(`Malformed lock item ${JSON.stringify(partitionKey)}: ${row.message}`);
    }
    // The table-wide Scan meets it too (other tests' items may be there; this one fails the listing).
    const scanError = await failureOf(() => drain(b.hash.getAllLocks()));
    expect(scanError).toBeInstanceOf(MalformedLockItemError);

    expect(b.writesBesidesNewLockPuts()).toEqual([]);
    expect(await rawItem(hashTable, { key: { S: partitionKey } })).toEqual(stored);
    await raw.send(new DeleteItemCommand({ TableName: hashTable, Key: { key: { S: partitionKey } } }));
  });
});

// ── The background heartbeat survives bad things ────────────────────────────

interface SabotageRow {
  readonly what: string;
  /** Damages the victim's item behind the client's back. */
  readonly sabotage: (tableName: string, key: string) => Promise<void>;
  /** The victim's item as the saboteur left it (the client must not touch it); read back when not given. */
  readonly expectedItem?: (key: string) => Item | undefined;
}

const FOREIGN_RVN = 'f0f0f0f0-0000-4000-8000-000000000001';
const sabotageRows: SabotageRow[] = [
  {
    what: 'its item is deleted (raw DeleteItem)',
    sabotage: async (TableName, key) => {
      await raw.send(new DeleteItemCommand({ TableName, Key: { key: { S: key } } }));
    },
    expectedItem: () => undefined,
  },
  {
    what: 'its item is overwritten by another owner (raw PutItem)',
    sabotage: async (TableName, key) => {
      await raw.send(
        new PutItemCommand({
          TableName,
          Item: { key: { S: key }, ownerName: { S: 'intruder' }, leaseDuration: { S: '60000' }, recordVersionNumber: { S: FOREIGN_RVN } },
        }),
      );
    },
    expectedItem: (key) => ({
      key: { S: key },
      ownerName: { S: 'intruder' },
      leaseDuration: { S: '60000' },
      recordVersionNumber: { S: FOREIGN_RVN },
    }),
  },
  {
    what: 'its ownerName is removed (raw UpdateItem)',
    sabotage: async (TableName, key) => {
      await raw.send(new UpdateItemCommand({ TableName, Key: { key: { S: key } }, UpdateExpression: 'REMOVE ownerName' }));
    },
  },
];

describe('the background heartbeat survives a lock destroyed under it', () => {
  test.each(sabotageRows)('a held lock becomes lost when $what; another lock of the client keeps heartbeating', async (row) => {
    const b = bench();
    const client = b.client({ leaseDuration: LEASE, heartbeatPeriod: HEARTBEAT });
    const victimKey = `victim-${randomUUID()}`;
    const survivorKey = `survivor-${randomUUID()}`;
    const victim = await client.acquireLock(victimKey, { additionalTimeToWaitForLock: 0 });
    const survivor = await client.acquireLock(survivorKey, { additionalTimeToWaitForLock: 0 });

    // Let one heartbeat round pass first: both heartbeat.
    const victimFirst = victim.recordVersionNumber;
    await waitUntil('the victim heartbeated once', () => victim.recordVersionNumber !== victimFirst, { timeoutMs: 3 * HEARTBEAT });

    await row.sabotage(hashTable, victimKey);
    const afterSabotage = row.expectedItem === undefined ? await rawItem(hashTable, { key: { S: victimKey } }) : row.expectedItem(victimKey);
    const sabotagedAt = performance.now();
    const survivorRvns = new Set([survivor.recordVersionNumber]);
    const sampler = setInterval(() => survivorRvns.add(survivor.recordVersionNumber), 20);
    try {
      // Within a couple of heartbeat periods (plus slack for a busy machine).
      await waitUntil('the victim is lost', () => victim.state === 'lost', { timeoutMs: 2 * HEARTBEAT + 1_000 });
      expect(performance.now() - sabotagedAt).toBeLessThan(2 * HEARTBEAT + 1_000);
      const rvnsAtLoss = survivorRvns.size;
      await sleep(4 * HEARTBEAT);
      // At least two further heartbeats of the survivor after the victim was lost.
      expect(survivorRvns.size).toBeGreaterThanOrEqual(rvnsAtLoss + 2);
    } finally {
      clearInterval(sampler);
    }

    expect(survivor.state).toBe('held');
    expect(client.hasLock(survivorKey)).toBe(true);
    expect(client.hasLock(victimKey)).toBe(false);
    // Heartbeats go on: a read may see a write whose reply has not arrived yet, so read until both agree.
    const survivorRvnInTable = async (): Promise<string | undefined> =>
      (await rawItem(hashTable, { key: { S: survivorKey } }))?.['recordVersionNumber']?.S;
    await waitUntil("the table holds the survivor's last RVN", async () => (await survivorRvnInTable()) === survivor.recordVersionNumber, {
      timeoutMs: 2 * HEARTBEAT,
    });
    // The client never wrote over what the saboteur left.
    expect(await rawItem(hashTable, { key: { S: victimKey } })).toEqual(afterSabotage);
    await expect(victim.sendHeartbeat()).rejects.toBeInstanceOf(LockLostError);
    expect(await victim.release()).toBe(false);
    expect(await survivor.release()).toBe(true);
  });

  test('locks whose table is deleted become lost within about a lease; the client keeps working and closes cleanly', async () => {
    const b = bench();
    const tableName = uniqueTableName('bad-input-doomed');
    const client = b.client({ tableName, leaseDuration: LEASE, heartbeatPeriod: HEARTBEAT });
    await client.createLockTable();
    const locks = await Promise.all(['a', 'b'].map((key) => client.acquireLock(key, { additionalTimeToWaitForLock: 0 })));
    const other = await b.hash.acquireLock(`elsewhere-${randomUUID()}`, { additionalTimeToWaitForLock: 0 });

    await raw.send(new DeleteTableCommand({ TableName: tableName }));
    const deletedAt = performance.now();
    await waitUntil('both locks are lost', () => locks.every((lock) => lock.state === 'lost'), { timeoutMs: LEASE + 2_000 });
    expect(performance.now() - deletedAt).toBeLessThan(LEASE + 2_000);

    // The other client on the surviving table is unaffected, and this one still answers.
    expect(other.state).toBe('held');
    expect(await client.lockTableExists()).toBe(false);
    await expect(client.acquireLock('a', { additionalTimeToWaitForLock: 0 })).rejects.toBeInstanceOf(LockTableDoesNotExistError);
    await expect(client.close()).resolves.toBeUndefined();
  });
});
