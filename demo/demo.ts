/**
 * `npm start`: a short live demo against an embedded DynamoDB Local.
 * A holder process takes a lock and heartbeats it; a second client waits;
 * the holder is killed with SIGKILL, and the waiter takes the lock over once
 * the holder's RVN has stayed unchanged for a whole lease on its own clock.
 */
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { spawn } from 'node:child_process';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { startDynamoDBLocal } from '../integration/support/dynamodb-local.js';
import { LockClient } from '../src/index.js';

const LEASE_MS = 3_000;
const HEARTBEAT_MS = 1_000;
const KEY = 'nightly-report';
const TABLE = 'demo-locks';
const started = performance.now();
const say = (who: string, text: string): void => {
  const t = ((performance.now() - started) / 1000).toFixed(2).padStart(6);
  console.log(`${t}s  ${who.padEnd(9)} ${text}`);
};

say('demo', 'starting DynamoDB Local (in memory, 127.0.0.1)…');
const dynamoDBLocal = await startDynamoDBLocal();
const dynamoDB = new DynamoDBClient({
  endpoint: dynamoDBLocal.endpoint,
  region: 'us-east-1',
  credentials: { accessKeyId: 'demo', secretAccessKey: 'demo' },
});
const waiter = new LockClient({ dynamoDB, tableName: TABLE, ownerName: 'waiter', leaseDuration: LEASE_MS, heartbeatPeriod: HEARTBEAT_MS });
const holderScript = fileURLToPath(new URL('../integration/support/holder-process.ts', import.meta.url));
const holder = spawn(
  process.execPath,
  ['--import', 'tsx', holderScript, dynamoDBLocal.endpoint, TABLE, KEY, 'holder', String(LEASE_MS), String(HEARTBEAT_MS)],
  { stdio: ['ignore', 'pipe', 'inherit'] },
);

try {
  await waiter.createLockTable({ ifNotExists: true });
  say('demo', `table "${TABLE}" is ACTIVE; lease ${LEASE_MS} ms, heartbeat every ${HEARTBEAT_MS} ms`);

  const heartbeats = createInterface({ input: holder.stdout });
  let beats = 0;
  const holderReady = new Promise<void>((resolve) => {
    heartbeats.on('line', (line) => {
      const event = JSON.parse(line) as { event: string; rvn: string; pid: number };
      if (event.event === 'acquired') {
        say('holder', `pid ${event.pid} acquired "${KEY}" (RVN ${event.rvn.slice(0, 8)}…)`);
        resolve();
      } else if (event.event === 'heartbeat') {
        say('holder', `heartbeat ${++beats}: RVN is now ${event.rvn.slice(0, 8)}…`);
      }
    });
  });
  await holderReady;

  say('waiter', `wants "${KEY}" too and starts polling every 250 ms`);
  const acquiring = waiter.acquireLock(KEY, { refreshPeriod: 250, additionalTimeToWaitForLock: 30_000 });

  await new Promise((resolve) => setTimeout(resolve, 3_500));
  holder.kill('SIGKILL');
  const killedAt = performance.now();
  say('demo', 'holder killed with SIGKILL: no release, no more heartbeats');

  const lock = await acquiring;
  const takeoverMs = performance.now() - killedAt;
  say('waiter', `acquired "${KEY}" ${Math.round(takeoverMs)} ms after the kill (lease ${LEASE_MS} ms): the RVN stood still for a whole lease`);
  say('waiter', `now the owner; RVN ${lock.recordVersionNumber.slice(0, 8)}…`);
  await lock.release();
  say('waiter', 'released the lock (item deleted)');
} finally {
  holder.kill('SIGKILL');
  await waiter.close();
  dynamoDB.destroy();
  await dynamoDBLocal.stop();
  say('demo', 'stopped everything it started; bye');
}
