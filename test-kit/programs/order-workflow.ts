/**
 * The two states of docs/hand-over.md's Step Functions workflow, as a
 * program that runs one state per process, as two Lambda functions would:
 * it reads the state's input (JSON) from its arguments and prints the
 * state's output (JSON) on stdout. The doc's snippet is this file's code.
 *
 * Usage: tsx test-kit/programs/order-workflow.ts <endpoint> <table> <takeLock|shipAndRelease> <input JSON>
 */
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { LockClient, type LockHandOff } from '../../src/index.js';

const [endpoint, tableName, state, input] = process.argv.slice(2);
if (endpoint === undefined || tableName === undefined || state === undefined || input === undefined) {
  throw new Error('usage: order-workflow <endpoint> <table> <takeLock|shipAndRelease> <input JSON>');
}

// One LockClient per function, made once at module scope: `locks`.
const locks = new LockClient({
  dynamoDB: new DynamoDBClient({ endpoint, region: 'us-east-1', credentials: { accessKeyId: state, secretAccessKey: state } }),
  tableName,
  ownerName: `${state}-${process.pid}`,
  leaseDuration: 5_000,
});

/** The steps the lock guards: each reports when it ran, and checks the lock right before its effect. */
async function reserveStock(orderId: string, signal: AbortSignal): Promise<void> {
  signal.throwIfAborted();
  process.stderr.write(`reserved stock for ${orderId}\n`);
}
async function ship(orderId: string, signal: AbortSignal): Promise<void> {
  signal.throwIfAborted();
  process.stderr.write(`shipped ${orderId}\n`);
}

// State "TakeLock": take the lock, do the first step, pass the lock on in the state's output.
export async function takeLock(input: { orderId: string }) {
  const lock = await locks.acquireLock(`order-${input.orderId}`);
  try {
    await reserveStock(input.orderId, lock.signal);
  } catch (error) {
    await lock.release();
    throw error;
  }
  return { orderId: input.orderId, lock: await lock.handOff() };
}

// State "ShipAndRelease", later in the workflow: adopt the lock, do the last step, release it.
export async function shipAndRelease(input: { orderId: string; lock: LockHandOff }) {
  await using lock = await locks.adoptLock(input.lock);
  await ship(input.orderId, lock.signal);
  return { orderId: input.orderId };
}

try {
  const parsed = JSON.parse(input) as { orderId: string; lock: LockHandOff };
  const output = state === 'takeLock' ? await takeLock(parsed) : await shipAndRelease(parsed);
  process.stdout.write(`${JSON.stringify(output)}\n`);
} finally {
  await locks.close();
}
