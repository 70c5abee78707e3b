/**
 * Taking many free locks at once, as README shows (`Promise.all` over
 * `acquireLock`), against DynamoDB Local.
 */
import { Agent } from 'node:http';
import { afterEach, beforeEach, expect, it } from '@jest/globals';
import type { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import type { LockClient } from '../../src/index.js';
import { localEndpoint, newLocalClient } from '../../test-kit/aws.js';
import { FaultProxy } from '../../test-kit/fault-proxy.js';
import { useLockTestBed } from '../../test-kit/jest/lock-test-bed-hook.js';

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

/** A client whose requests reach DynamoDB Local over `sockets` connections, each request `latencyMs` late. */
function slowClient(ownerName: string, sockets: number, latencyMs: number): LockClient {
  proxy.addLatency(latencyMs);
  const dynamoDB = newLocalClient({
    endpoint: proxy.endpoint,
    credentials: { accessKeyId: 'AKIDmany', secretAccessKey: 'many' },
    requestHandler: { httpAgent: new Agent({ keepAlive: true, maxSockets: sockets }) },
  });
  dynamoDBClients.push(dynamoDB);
  return bed.client({ ownerName, leaseDuration: 2_000, heartbeatPeriod: 500, backgroundHeartbeats: false }, dynamoDB);
}

it("every call takes its free lock, however long its request waits behind the client's other requests", async () => {
  // 1 000 requests over 8 connections, each 20 ms late: the last ones wait at least 2.5 s to be
  // sent, longer than a call may wait without an answer (nothing to wait for beyond the
  // lease: its deadline is at once, its requests are cut off a lease, 2 s, past it).
  const client = slowClient('many', 8, 20);
  const keys = Array.from({ length: 1_000 }, (_, i) => `many-${i}`);

  const outcomes = await Promise.allSettled(keys.map((key) => client.acquireLock(key, { additionalTimeToWaitForLock: 0, refreshPeriod: 100 })));

  const failures = outcomes.flatMap((outcome, i) => (outcome.status === 'rejected' ? [`${keys[i]}: ${String(outcome.reason)}`] : []));
  expect(failures.slice(0, 3)).toEqual([]);
  expect(failures).toHaveLength(0);
  expect(await bed.owner('many-999')).toBe('many');
  proxy.passThrough(); // so that closing the client releases them quickly
});
