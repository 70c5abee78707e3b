/**
 * A program that acquires a few locks, waits until each has been renewed by
 * the background heartbeat loop, and then simply ends its main module: with
 * `return`, leaving the client open and the locks held; with `close`, after
 * `await client.close()`. Whether the process then exits by itself is what
 * integration/heartbeat/process-exit.test.ts checks.
 *
 * Usage: tsx test-kit/programs/exit-process.ts <endpoint> <table> <return|close> <key>...
 * Prints one JSON line per step on stdout.
 */
import { LockClient, type Lock } from '../../src/index.js';

const [endpoint, tableName, ending, ...keys] = process.argv.slice(2);
if (endpoint === undefined || tableName === undefined || (ending !== 'return' && ending !== 'close') || keys.length === 0) {
  throw new Error('usage: exit-process <endpoint> <table> <return|close> <key>...');
}

const report = (event: string, fields: object = {}): void => {
  process.stdout.write(`${JSON.stringify({ event, ...fields })}\n`);
};

const client = new LockClient({
  dynamoDBConfig: {
    endpoint,
    region: 'us-east-1',
    credentials: { accessKeyId: 'exiting', secretAccessKey: 'exiting' },
  },
  tableName,
  ownerName: 'exiting-process',
  leaseDuration: 2_000,
  heartbeatPeriod: 500,
});

client.on('lost', ({ error }) => report('lost', { message: error.message }));

// The lock client keeps nothing alive on purpose; until the locks are renewed, this does.
const setup = setInterval(() => undefined, 1_000);
const locks: Lock[] = await Promise.all(keys.map((key) => client.acquireLock(key)));
const renewed = new Set<Lock>();
const allRenewed = await new Promise<boolean>((resolve) => {
  const subscription = client.on('heartbeat', ({ lock }) => {
    renewed.add(lock);
    if (renewed.size < locks.length) return;
    subscription.dispose();
    resolve(true);
  });
  // A machine too busy to renew them must end this program with an answer, not keep it waiting.
  setTimeout(() => resolve(false), 10_000).unref();
});
clearInterval(setup);
if (!allRenewed) {
  report('not renewed', { states: locks.map((lock) => lock.state) });
  process.exitCode = 2;
}
report('holding', { locks: locks.map((lock) => ({ key: lock.partitionKey, rvn: lock.recordVersionNumber, state: lock.state })) });

if (ending === 'close') {
  await client.close();
  report('closed', { states: locks.map((lock) => lock.state) });
}
// The end of the main module: the process must now exit without any help.
