/**
 * Taking many free locks at once, as README shows (`Promise.all` over
 * `acquireLock`), against DynamoDB Local: every call gets its lock however
 * long it waits behind the client's other requests, and new-lock writes
 * handed over together go out as PartiQL INSERTs in batches that write the
 * PutItem's very item.
 */
import { Agent } from 'node:http';
import { afterEach, beforeEach, expect, it } from '@jest/globals';
import type { BatchStatementRequest, DynamoDBClient } from '@aws-sdk/client-dynamodb';
import type { LockClient } from '../../src/index.js';
import { localEndpoint, newLocalClient } from '../../test-kit/aws.js';
import { FaultProxy } from '../../test-kit/fault-proxy.js';
import { useLockTestBed } from '../../test-kit/jest/lock-test-bed-hook.js';
import { recording, refuseStatementBatches, type SentCommand } from '../../test-kit/test-locks.js';

const bed = useLockTestBed('acquire-many');

let proxy: FaultProxy;
const dynamoDBClients: DynamoDBClient[] = [];
beforeEach(async () => {
  proxy = await FaultProxy.start(localEndpoint());
});
afterEach(async () => {
  for (const client of dynamoDBClients.splice(0)) client.destroy();
  await proxy.close();
});

/** A client with the default lease whose requests reach DynamoDB Local over `sockets` connections, each request `latencyMs` late. */
function slowClient(ownerName: string, sockets: number, latencyMs: number): LockClient {
  proxy.addLatency(latencyMs);
  const dynamoDB = newLocalClient({
    endpoint: proxy.endpoint,
    credentials: { accessKeyId: 'AKIDmany', secretAccessKey: 'many' },
    requestHandler: { httpAgent: new Agent({ keepAlive: true, maxSockets: sockets }) },
  });
  dynamoDBClients.push(dynamoDB);
  return bed.client({ ownerName, heartbeatPeriod: 5_000, backgroundHeartbeats: false }, dynamoDB);
}

it("every call with the default wait takes its free lock, however long its request waits behind the client's other requests", async () => {
  // 1 000 requests over 8 connections, each 20 ms late: the last ones wait at least 2.5 s to be
  // sent, longer than the call's own wait (1 s by default) but well within its cut-off (a lease,
  // 20 s by default, past that): time waiting for a turn does not count against the wait.
  const client = slowClient('many', 8, 20);
  const keys = Array.from({ length: 1_000 }, (_, i) => `many-${i}`);

  const outcomes = await Promise.allSettled(keys.map((key) => client.acquireLock(key)));

  const failures = outcomes.flatMap((outcome, i) => (outcome.status === 'rejected' ? [`${keys[i]}: ${String(outcome.reason)}`] : []));
  expect(failures.slice(0, 3)).toEqual([]);
  expect(failures).toHaveLength(0);
  expect(await bed.owner('many-999')).toBe('many');
  proxy.passThrough(); // so that closing the client releases them quickly
});

/** A client whose calls are recorded (and may be refused) before they reach DynamoDB Local. */
function recordedClient(ownerName: string, settings: { heartbeatBatchSize?: number } = {}) {
  const recorder = recording(bed.dynamoDBClient(ownerName));
  const client = bed.client(
    { ownerName, leaseDuration: 2_000, heartbeatPeriod: 500, backgroundHeartbeats: false, ...settings },
    recorder.dynamoDB,
  );
  return { client, recorder };
}

const statementsOf = (command: SentCommand): BatchStatementRequest[] => command.input['Statements'] as BatchStatementRequest[];

it('free locks taken together go out as INSERTs, 25 to a call, each writing the item the new-lock PutItem writes', async () => {
  const { client, recorder } = recordedClient('together');
  const options = { data: 'payload', additionalAttributes: { "it's": 'quoted', tries: 7 } };
  const keys = Array.from({ length: 60 }, (_, i) => `together-${i}`);

  const locks = await Promise.all(keys.map((key) => client.acquireLock(key, options)));

  const batches = recorder.named('BatchExecuteStatementCommand');
  expect(batches.map((batch) => statementsOf(batch).length)).toEqual([25, 25, 10]);
  expect(batches.flatMap(statementsOf).every((statement) => statement.Statement?.startsWith('INSERT INTO ') === true)).toBe(true);
  expect(recorder.named('PutItemCommand')).toHaveLength(0);

  // A lock taken alone goes out as the PutItem; every item is that one's, but for key and RVN.
  const alone = await client.acquireLock('alone', options);
  expect(recorder.named('PutItemCommand')).toHaveLength(1);
  const reference = await bed.item('alone');
  expect(reference?.['recordVersionNumber']).toEqual({ S: alone.recordVersionNumber });
  for (const lock of locks) {
    expect(await bed.item(lock.partitionKey)).toEqual({
      ...reference,
      key: { S: lock.partitionKey },
      recordVersionNumber: { S: lock.recordVersionNumber },
    });
  }
});

it("a lock among them that exists is read and decided on as after the PutItem's refusal: a held one is not taken, a released one is", async () => {
  const other = bed.client({ ownerName: 'other', leaseDuration: 2_000, heartbeatPeriod: 500, backgroundHeartbeats: false });
  await other.acquireLock('held');
  await (await other.acquireLock('released')).release({ deleteLock: false });
  const { client, recorder } = recordedClient('burst');
  const keys = ['free-1', 'held', 'free-2', 'released', 'free-3'];

  const outcomes = await Promise.all(keys.map((key) => client.tryAcquireLock(key, { shouldSkipBlockingWait: true })));

  expect(outcomes.map((lock) => lock?.ownerName)).toEqual(['burst', undefined, 'burst', 'burst', 'burst']);
  expect(await bed.owner('held')).toBe('other');
  expect(await bed.owner('released')).toBe('burst');
  expect(statementsOf(recorder.named('BatchExecuteStatementCommand')[0] as SentCommand)).toHaveLength(5);
  const read = recorder.named('GetItemCommand').map((command) => (command.input['Key'] as Record<string, { S: string }>)['key']?.S);
  expect(read.sort()).toEqual(['held', 'released']);
});

it('a table that refuses batches gets one PutItem per acquisition from then on, with the same RVNs', async () => {
  const { client, recorder } = recordedClient('no-partiql');
  refuseStatementBatches(recorder, 'PartiQLInsert');
  const first = await Promise.all(Array.from({ length: 10 }, (_, i) => client.acquireLock(`refused-${i}`)));
  const second = await Promise.all(Array.from({ length: 10 }, (_, i) => client.acquireLock(`later-${i}`)));

  expect(recorder.named('BatchExecuteStatementCommand')).toHaveLength(1);
  const refusedRvns = statementsOf(recorder.named('BatchExecuteStatementCommand')[0] as SentCommand).map(
    (statement) => statement.Parameters?.[3]?.S,
  );
  expect(refusedRvns).toEqual(first.map((lock) => lock.recordVersionNumber));
  expect(recorder.named('PutItemCommand')).toHaveLength(20);
  for (const lock of [...first, ...second]) expect(await bed.rvn(lock.partitionKey)).toBe(lock.recordVersionNumber);
});

it('a handful of free locks taken together go out alone, one PutItem each, all at once; five or more go in a batch', async () => {
  const { client, recorder } = recordedClient('handful');

  await Promise.all(Array.from({ length: 4 }, (_, i) => client.acquireLock(`handful-${i}`)));
  expect(recorder.named('BatchExecuteStatementCommand')).toHaveLength(0);
  expect(recorder.named('PutItemCommand')).toHaveLength(4);

  await Promise.all(Array.from({ length: 5 }, (_, i) => client.acquireLock(`burst-${i}`)));
  expect(recorder.named('BatchExecuteStatementCommand').map((batch) => statementsOf(batch).length)).toEqual([5]);
  expect(recorder.named('PutItemCommand')).toHaveLength(4);
});

it('heartbeatBatchSize 1 keeps acquisitions out of batches too', async () => {
  const { client, recorder } = recordedClient('single', { heartbeatBatchSize: 1 });
  await Promise.all(Array.from({ length: 10 }, (_, i) => client.acquireLock(`single-${i}`)));
  expect(recorder.named('BatchExecuteStatementCommand')).toHaveLength(0);
  expect(recorder.named('PutItemCommand')).toHaveLength(10);
});
