/**
 * Guarded writes (`lock.transactWrite`) against DynamoDB Local: the caller's
 * writes commit only while the lock item still shows this holder, whatever
 * pause comes between the holder's last check and the write, and whatever
 * the outcome of the holder's heartbeats (applied with a lost reply, or
 * applied and not yet answered).
 */
import { describe, expect, it } from '@jest/globals';
import {
  DeleteItemCommand,
  PutItemCommand,
  TransactWriteItemsCommand,
  UpdateItemCommand,
  type DynamoDBClient,
  type TransactWriteItem,
} from '@aws-sdk/client-dynamodb';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import {
  GuardedWriteCanceledError,
  GuardedWriteOutcomeUnknownError,
  InvalidArgumentError,
  LockLostError,
  type LockClient,
} from '../src/index.js';
import { loadJavaScenarios } from '../test-kit/java-fixtures.js';
import { createDataTable, dataItem, increment } from '../test-kit/data-table.js';
import { useFaultBed } from '../test-kit/jest/fault-bed.js';
import { dynamoDBErrorReply, FaultProxy, operationOf, type ProxiedRequest } from '../test-kit/fault-proxy.js';
import { javaStaleLockTakeover } from '../test-kit/java-items.js';
import { expectLostOnce, recordEvents } from '../test-kit/jest/lock-events.js';
import { recording, rejectionOf, sleep, waitUntil, watch } from '../test-kit/test-locks.js';

const faults = useFaultBed('guarded');
const bed = faults.bed;
const scenarios = loadJavaScenarios();
const PAUSED_WRITER = fileURLToPath(new URL('../test-kit/programs/paused-writer-process.ts', import.meta.url));

/** The key the recorded Java takeover writes. */
const KEY = 'lock-1';

const put = (tableName: string, id: string, fields: Record<string, { S: string }> = {}): TransactWriteItem => ({
  Put: { TableName: tableName, Item: { id: { S: id }, ...fields } },
});
const counterOf = async (tableName: string, id: string): Promise<number | undefined> => {
  const n = (await dataItem(bed.raw, tableName, id))?.['n']?.N;
  return n === undefined ? undefined : Number(n);
};

const isTransaction = (request: ProxiedRequest): boolean => operationOf(request) === 'TransactWriteItems';
const isUpdateItem = (request: ProxiedRequest): boolean => operationOf(request) === 'UpdateItem';
const newRvnOf = (request: ProxiedRequest): string | undefined =>
  (JSON.parse(request.body.toString('utf8')) as { ExpressionAttributeValues?: Record<string, { S?: string }> }).ExpressionAttributeValues?.[
    ':newRvn'
  ]?.S;

/** A holder that only heartbeats when told: nothing changes its lock item unless the test does it. */
async function quietHolder(owner: string, dynamoDB?: Pick<DynamoDBClient, 'send'>) {
  const client = bed.client({ ownerName: owner, leaseDuration: 20_000, heartbeatPeriod: 5_000, backgroundHeartbeats: false }, dynamoDB);
  const events = recordEvents(client);
  const lock = await client.acquireLock(KEY);
  return { client, lock, events };
}

/** What a Java client does to a lock it saw stand still for its lease: takes it over, conditioned on that RVN. */
async function javaTakesOver(rvn: string): Promise<void> {
  await bed.raw.send(new PutItemCommand(javaStaleLockTakeover(scenarios, bed.tableName, rvn)));
}

describe('a guarded write while the lock is held', () => {
  it('commits the caller’s items in one transaction with the lock’s guard, and the lock stays held', async () => {
    const data = await createDataTable(bed.raw, 'guarded-data');
    const recorder = recording(bed.dynamoDBClient('writer'));
    const { lock } = await quietHolder('writer', recorder.dynamoDB);

    await lock.transactWrite([put(data, 'a', { v: { S: '1' } }), increment(data, 'b')]);

    expect(await dataItem(bed.raw, data, 'a')).toEqual({ id: { S: 'a' }, v: { S: '1' } });
    expect(await counterOf(data, 'b')).toBe(1);
    expect(lock.state).toBe('held');
    const [sent] = recorder.named('TransactWriteItemsCommand');
    const items = sent?.input['TransactItems'] as TransactWriteItem[];
    // The guard goes first; the caller's items follow in order.
    expect(items.map((item) => Object.keys(item)[0])).toEqual(['ConditionCheck', 'Put', 'Update']);
    expect(items[0]?.ConditionCheck?.ExpressionAttributeValues?.[':rvn']).toEqual({ S: lock.recordVersionNumber });
    expect(typeof sent?.input['ClientRequestToken']).toBe('string');
  });

  it('a failing condition of the caller’s is a GuardedWriteCanceledError naming that item; nothing is applied, the lock stays held', async () => {
    const data = await createDataTable(bed.raw, 'guarded-data');
    const { lock, events } = await quietHolder('writer');
    await bed.raw.send(new PutItemCommand({ TableName: data, Item: { id: { S: 'job' }, status: { S: 'done' } } }));

    const error = await rejectionOf(
      lock.transactWrite([
        put(data, 'audit', { note: { S: 'started' } }),
        {
          Update: {
            TableName: data,
            Key: { id: { S: 'job' } },
            UpdateExpression: 'SET #s = :running',
            ConditionExpression: '#s = :pending',
            ExpressionAttributeNames: { '#s': 'status' },
            ExpressionAttributeValues: { ':running': { S: 'running' }, ':pending': { S: 'pending' } },
            ReturnValuesOnConditionCheckFailure: 'ALL_OLD',
          },
        },
      ]),
    );

    expect(error).toBeInstanceOf(GuardedWriteCanceledError);
    const canceled = error as GuardedWriteCanceledError;
    expect(canceled.failedConditions).toEqual([1]);
    expect(canceled.cancellations).toEqual([
      { index: 1, code: 'ConditionalCheckFailed', message: expect.any(String), item: { id: { S: 'job' }, status: { S: 'done' } } },
    ]);
    expect(canceled.lockCheckCode).toBeUndefined();
    expect(canceled.retryable).toBe(false);
    expect(canceled.message).toMatch(/item 1: ConditionalCheckFailed/);
    expect(await dataItem(bed.raw, data, 'audit')).toBeUndefined();
    expect(lock.state).toBe('held');
    expect(events.of('lost')).toEqual([]);
    // Still usable.
    await lock.transactWrite([put(data, 'audit', { note: { S: 'retried' } })]);
    expect((await dataItem(bed.raw, data, 'audit'))?.['note']).toEqual({ S: 'retried' });
  });

  it('refuses what DynamoDB would refuse, and the lock item itself, before sending anything', async () => {
    const data = await createDataTable(bed.raw, 'guarded-data');
    const recorder = recording(bed.dynamoDBClient('writer'));
    const { lock } = await quietHolder('writer', recorder.dynamoDB);
    const bad: [string, unknown][] = [
      ['no items', []],
      ['100 items', Array.from({ length: 100 }, (_, i) => put(data, `i${i}`))],
      ['two actions in one item', [{ ...put(data, 'a'), ...increment(data, 'b') }]],
      ['no action', [{}]],
      ['no table name', [{ Put: { Item: { id: { S: 'a' } } } }]],
      ['a Put of the lock item', [put(data, 'a'), { Put: { TableName: bed.tableName, Item: { key: { S: KEY } } } }]],
      [
        'a ConditionCheck of the lock item',
        [
          {
            ConditionCheck: {
              TableName: bed.tableName,
              Key: { key: { S: KEY } },
              ConditionExpression: 'attribute_exists(#k)',
              ExpressionAttributeNames: { '#k': 'key' },
            },
          },
        ],
      ],
    ];
    for (const [what, items] of bad) {
      const error = await rejectionOf(lock.transactWrite(items as TransactWriteItem[]));
      expect([what, error]).toEqual([what, expect.any(InvalidArgumentError)]);
    }
    // 99 items and another key of the lock table are fine.
    await lock.transactWrite([
      ...Array.from({ length: 98 }, (_, i) => put(data, `i${i}`)),
      {
        Put: {
          TableName: bed.tableName,
          Item: { key: { S: 'other' }, ownerName: { S: 'x' }, leaseDuration: { S: '1' }, recordVersionNumber: { S: 'r' } },
        },
      },
    ]);
    expect(recorder.named('TransactWriteItemsCommand')).toHaveLength(1);
    expect(lock.state).toBe('held');
  });

  it('its guard as a raw item lets the caller send the transaction itself; it fails once the lock moved', async () => {
    const data = await createDataTable(bed.raw, 'guarded-data');
    const { lock } = await quietHolder('writer');

    await bed.raw.send(new TransactWriteItemsCommand({ TransactItems: [put(data, 'a'), lock.guardCondition()] }));
    expect(await dataItem(bed.raw, data, 'a')).toBeDefined();

    await javaTakesOver(lock.recordVersionNumber);
    const error = (await rejectionOf(
      bed.raw.send(new TransactWriteItemsCommand({ TransactItems: [put(data, 'b'), lock.guardCondition()] })),
    )) as { name: string; CancellationReasons?: { Code?: string; Item?: Record<string, { S?: string }> }[] };
    expect(error.name).toBe('TransactionCanceledException');
    expect(error.CancellationReasons?.map((reason) => reason.Code)).toEqual(['None', 'ConditionalCheckFailed']);
    expect(error.CancellationReasons?.[1]?.Item?.['ownerName']).toEqual({ S: 'owner-B' });
    expect(await dataItem(bed.raw, data, 'b')).toBeUndefined();
  });
});

describe('a guarded write after the lock moved', () => {
  const moves: [string, (rvn: string) => Promise<unknown>, string | undefined][] = [
    ['taken over by a Java client (its recorded stale-lock PutItem)', (rvn) => javaTakesOver(rvn), 'owner-B'],
    [
      'marked released by someone else',
      () =>
        bed.raw.send(
          new UpdateItemCommand({
            TableName: bed.tableName,
            Key: { key: { S: KEY } },
            UpdateExpression: 'SET isReleased = :one',
            ExpressionAttributeValues: { ':one': { S: '1' } },
          }),
        ),
      'writer',
    ],
    ['deleted', () => bed.raw.send(new DeleteItemCommand({ TableName: bed.tableName, Key: { key: { S: KEY } } })), undefined],
  ];

  it.each(moves)(
    'is refused by DynamoDB when the lock was %s: LockLostError naming the holder, nothing applied, the lock ends as lost',
    async (_, move, holder) => {
      const data = await createDataTable(bed.raw, 'guarded-data');
      const recorder = recording(bed.dynamoDBClient('writer'));
      const { lock, events } = await quietHolder('writer', recorder.dynamoDB);
      await move(lock.recordVersionNumber);
      // This client has not noticed: no heartbeat since, and its lease has long to run.
      lock.throwIfLost();

      const error = await rejectionOf(lock.transactWrite([put(data, 'a'), increment(data, 'b')]));

      expect(error).toBeInstanceOf(LockLostError);
      const kind = holder === undefined ? 'deleted' : holder === 'writer' ? 'released' : 'taken';
      expect(error).toMatchObject({ kind, holder: holder === undefined ? undefined : { ownerName: holder } });
      expect((error as Error).message).toMatch(/guarded write was refused/);
      expect(await dataItem(bed.raw, data, 'a')).toBeUndefined();
      expect(await counterOf(data, 'b')).toBeUndefined();
      expect(lock.state).toBe('lost');
      expect(lock.signal.reason).toBe(error);
      expectLostOnce(events, lock, error);
      // Nothing more is sent under a lost lock.
      await expect(lock.transactWrite([put(data, 'c')])).rejects.toBe(error);
      expect(() => lock.guardCondition()).toThrow(LockLostError);
      expect(recorder.named('TransactWriteItemsCommand')).toHaveLength(1);
    },
  );

  it('from a holder delayed between its check and the write past its lease, while another client takes over, is refused; nothing is applied', async () => {
    const data = await createDataTable(bed.raw, 'guarded-data');
    const inner = bed.dynamoDBClient('delayed');
    let sendNow!: () => void;
    const gate = new Promise<void>((resolve) => {
      sendNow = resolve;
    });
    let reachedSend!: () => void;
    const atSend = new Promise<void>((resolve) => {
      reachedSend = resolve;
    });
    // Every check of the lock client has passed when a command reaches `send`: hold the transaction there.
    const delayed: Pick<DynamoDBClient, 'send'> = {
      send: (async (command: { constructor: { name: string } }, options?: unknown) => {
        if (command.constructor.name === 'TransactWriteItemsCommand') {
          reachedSend();
          await gate;
        }
        return (inner.send as (c: unknown, o?: unknown) => Promise<unknown>)(command, options);
      }) as DynamoDBClient['send'],
    };
    const holder = bed.client({ ownerName: 'delayed', leaseDuration: 1_000, heartbeatPeriod: 250 }, delayed);
    const lock = await holder.acquireLock(KEY);
    const writing = watch(lock.transactWrite([put(data, KEY, { writer: { S: 'delayed' } })]));
    await atSend;

    // The holder's heartbeats wait behind its write: its RVN stands still, and a waiter takes over after the lease.
    const taker = bed.client({ ownerName: 'taker', leaseDuration: 1_000, heartbeatPeriod: 250 });
    const taken = await taker.acquireLock(KEY, { refreshPeriod: 100, additionalTimeToWaitForLock: 10_000 });
    expect(writing.settled()).toBe(false);
    sendNow();

    const error = await rejectionOf(writing.promise);
    expect(error).toMatchObject({ name: 'LockLostError', kind: 'taken', holder: { ownerName: 'taker' } });
    expect(await dataItem(bed.raw, data, KEY)).toBeUndefined();
    expect(lock.state).toBe('lost');
    // The new holder's guarded writes go through.
    await taken.transactWrite([put(data, KEY, { writer: { S: 'taker' } })]);
    expect((await dataItem(bed.raw, data, KEY))?.['writer']).toEqual({ S: 'taker' });
  }, 20_000);

  /** The state letter of a process in /proc (`T`: stopped). */
  const processState = (pid: number | undefined): string | undefined => /\) (\w) /.exec(readFileSync(`/proc/${pid}/stat`, 'utf8'))?.[1];

  it.each([
    ['another client of this library', 'ours'],
    ['a Java client (its recorded stale-lock PutItem, after watching the RVN stand still for the lease)', 'java'],
  ])(
    'from a holder SIGSTOPped between its check and the write, past its lease, while %s takes over, is refused; nothing is applied',
    async (_, taker) => {
      const data = await createDataTable(bed.raw, 'guarded-data');
      const writer = bed.spawnReporter(PAUSED_WRITER, [bed.tableName, data, KEY, 'paused-writer', '1500', '300']);
      const acquired = await writer.next('acquired');
      const pausing = await writer.next('pausing');
      await waitUntil('the writer is stopped', () => processState(writer.child.pid) === 'T');
      // Its guard names the RVN of its last confirmed write; nothing of its write has reached DynamoDB.
      expect(pausing['guardRvn']).toBe(await bed.rvn(KEY));
      expect(typeof acquired.rvn).toBe('string');

      let newOwner: string;
      if (taker === 'ours') {
        await bed
          .client({ ownerName: 'taker', leaseDuration: 1_500, heartbeatPeriod: 300 })
          .acquireLock(KEY, { refreshPeriod: 100, additionalTimeToWaitForLock: 10_000 });
        newOwner = 'taker';
      } else {
        // Java's acquireLock: a consistent read, the RVN unchanged for longer than the stored lease, the conditional PutItem.
        const seen = await bed.item(KEY);
        const rvn = seen?.['recordVersionNumber']?.S as string;
        await sleep(Number(seen?.['leaseDuration']?.S) + 100);
        expect(await bed.rvn(KEY)).toBe(rvn);
        await javaTakesOver(rvn);
        newOwner = 'owner-B';
      }
      expect(await bed.owner(KEY)).toBe(newOwner);
      writer.child.kill('SIGCONT');

      const outcome = await writer.next('outcome');
      expect(outcome).toMatchObject({ committed: false, error: 'LockLostError', kind: 'taken', holder: newOwner, state: 'lost' });
      expect(await dataItem(bed.raw, data, KEY)).toBeUndefined();
      expect(await bed.owner(KEY)).toBe(newOwner);
    },
    30_000,
  );
});

describe('a guarded write and the holder’s heartbeats', () => {
  it('commits after a heartbeat whose outcome is unknown (applied, its reply lost, the SDK’s retries answered 500)', async () => {
    const data = await createDataTable(bed.raw, 'guarded-data');
    const network = await faults.proxied('uncertain', { sdkDefaults: true });
    const { lock, events } = await quietHolder('uncertain', network.dynamoDB);
    const confirmedRvn = lock.recordVersionNumber;

    const lost = network.proxy.loseReplyThenRetries(isUpdateItem, { action: 'respond', reply: dynamoDBErrorReply('InternalServerError') });
    await expect(lock.sendHeartbeat()).rejects.toMatchObject({ name: 'InternalServerError' });
    const applied = newRvnOf((await lost).request);
    // The table holds the heartbeat's RVN; the holder could not confirm it.
    expect(await bed.rvn(KEY)).toBe(applied);
    expect(applied).not.toBe(confirmedRvn);
    expect(lock.recordVersionNumber).toBe(confirmedRvn);

    await lock.transactWrite([put(data, 'a')]);

    expect(await dataItem(bed.raw, data, 'a')).toBeDefined();
    expect(lock.state).toBe('held');
    expect(events.of('lost')).toEqual([]);
  }, 30_000);

  it('waits for a heartbeat that is applied but not yet answered, then commits', async () => {
    const data = await createDataTable(bed.raw, 'guarded-data');
    const inner = bed.dynamoDBClient('in-flight');
    let holdReply: Promise<void> | undefined;
    // Hands back an UpdateItem's reply only when the test says so: DynamoDB has applied it meanwhile.
    const slowReplies: Pick<DynamoDBClient, 'send'> = {
      send: (async (command: { constructor: { name: string } }, options?: unknown) => {
        const output = await (inner.send as (c: unknown, o?: unknown) => Promise<unknown>)(command, options);
        if (command.constructor.name === 'UpdateItemCommand') await holdReply;
        return output;
      }) as DynamoDBClient['send'],
    };
    const { lock, events } = await quietHolder('in-flight', slowReplies);
    let answer!: () => void;
    holdReply = new Promise((resolve) => {
      answer = resolve;
    });

    const heartbeat = watch(lock.sendHeartbeat());
    await waitUntil('the heartbeat is applied', async () => (await bed.rvn(KEY)) !== lock.recordVersionNumber);
    const writing = watch(lock.transactWrite([put(data, 'a')]));
    await sleep(200);
    expect(heartbeat.settled()).toBe(false);
    expect(writing.settled()).toBe(false);
    answer();

    await heartbeat.promise;
    await writing.promise;
    expect(await dataItem(bed.raw, data, 'a')).toBeDefined();
    expect(lock.state).toBe('held');
    expect(lock.recordVersionNumber).toBe(await bed.rvn(KEY));
    expect(events.of('lost')).toEqual([]);
  });
});

describe('a guarded write whose own reply is lost', () => {
  async function proxiedHolder(owner: string): Promise<{ lock: Awaited<ReturnType<LockClient['acquireLock']>>; proxy: FaultProxy }> {
    const network = await faults.proxied(owner, { sdkDefaults: true });
    const client = bed.client({ ownerName: owner, leaseDuration: 20_000, heartbeatPeriod: 5_000 }, network.dynamoDB);
    return { lock: await client.acquireLock(KEY), proxy: network.proxy };
  }

  it('is retried by the SDK with the same ClientRequestToken, and commits once', async () => {
    const data = await createDataTable(bed.raw, 'guarded-data');
    const { lock, proxy } = await proxiedHolder('retried');
    const lost = proxy.loseReplyThenRetries(isTransaction, { action: 'forward' });

    await lock.transactWrite([increment(data, 'counter')]);

    const first = await lost;
    expect(first.swallowedStatusLine).toMatch(/^HTTP\/1\.1 200 /);
    const attempts = proxy.exchanges.filter((e) => isTransaction(e.request));
    expect(attempts.length).toBeGreaterThanOrEqual(2);
    const tokens = attempts.map((e) => (JSON.parse(e.request.body.toString('utf8')) as { ClientRequestToken?: string }).ClientRequestToken);
    expect(new Set(tokens).size).toBe(1);
    expect(await counterOf(data, 'counter')).toBe(1);
    expect(lock.state).toBe('held');
  }, 30_000);

  it('when the retries get no definite answer: GuardedWriteOutcomeUnknownError (it did commit), and the lock stays held', async () => {
    const data = await createDataTable(bed.raw, 'guarded-data');
    const { lock, proxy } = await proxiedHolder('unknown');
    const lost = proxy.loseReplyThenRetries(isTransaction, { action: 'respond', reply: dynamoDBErrorReply('InternalServerError') });

    const error = await rejectionOf(lock.transactWrite([increment(data, 'counter')]));

    await lost;
    expect(error).toBeInstanceOf(GuardedWriteOutcomeUnknownError);
    expect((error as Error).cause).toMatchObject({ name: 'InternalServerError' });
    expect(await counterOf(data, 'counter')).toBe(1);
    expect(lock.state).toBe('held');
    await lock.transactWrite([increment(data, 'counter')]);
    expect(await counterOf(data, 'counter')).toBe(2);
  }, 30_000);
});
