/**
 * A candidate of a leader election in a process of its own, for the election
 * tests and the demo, which SIGKILL it to play a leader that dies.
 *
 * It reports JSON lines on stdout, each with `t`, the machine's monotonic
 * clock in nanoseconds (process.hrtime.bigint(), the same clock in every
 * process of this machine), so that the leadership terms of several
 * processes can be laid side by side:
 *   campaigning, leader (became leader), leading (every 50 ms, only while
 *   `throwIfLost()` passes; `t` is read before the check), heartbeat, lost,
 *   resigned, stopped, error.
 * After losing leadership it campaigns again; after resigning it waits for
 * the `campaign` command. Commands, one per line on stdin: `resign`,
 * `campaign`, `stop`. It stops when stdin closes too, so it never outlives
 * the process that started it.
 *
 * Usage: tsx election-candidate.ts --endpoint URL --table NAME --key KEY --name NAME
 *          [--lease MS] [--heartbeat MS] [--refresh MS] [--address HOST:PORT]
 */
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { createInterface } from 'node:readline';
import { parseArgs } from 'node:util';
import { LeaderElection, LockClient, type Leadership } from '../../src/index.js';

const { values } = parseArgs({
  options: {
    endpoint: { type: 'string' },
    table: { type: 'string' },
    key: { type: 'string' },
    name: { type: 'string' },
    lease: { type: 'string', default: '2000' },
    heartbeat: { type: 'string', default: '500' },
    refresh: { type: 'string', default: '100' },
    address: { type: 'string', default: '' },
  },
  strict: true,
});
const { endpoint, table, key, name } = values;
if (endpoint === undefined || table === undefined || key === undefined || name === undefined) {
  throw new Error('usage: election-candidate --endpoint URL --table NAME --key KEY --name NAME [--lease MS] [--heartbeat MS] [--refresh MS]');
}

const LEADING_TICK_MS = 50;
const now = (): string => process.hrtime.bigint().toString();
const report = (event: string, fields: object = {}): void => {
  process.stdout.write(`${JSON.stringify({ event, name, pid: process.pid, t: now(), ...fields })}\n`);
};

const dynamoDB = new DynamoDBClient({
  endpoint,
  region: 'us-east-1',
  credentials: { accessKeyId: `candidate${name.replace(/[^A-Za-z0-9]/g, '')}`, secretAccessKey: 'candidate' },
});
const client = new LockClient({
  dynamoDB,
  tableName: table,
  ownerName: name,
  leaseDuration: Number(values.lease),
  heartbeatPeriod: Number(values.heartbeat),
});
const election = new LeaderElection(client, key, {
  data: JSON.stringify({ name, address: values.address, pid: process.pid }),
  refreshPeriod: Number(values.refresh),
});
client.on('heartbeat', ({ lock }) => report('heartbeat', { rvn: lock.recordVersionNumber }));

let stopping = false;
let campaign: AbortController | undefined;
let leadership: Leadership | undefined;
let ticker: NodeJS.Timeout | undefined;

async function campaignOnce(): Promise<void> {
  if (stopping || campaign !== undefined || leadership !== undefined) return;
  const attempt = new AbortController();
  campaign = attempt;
  report('campaigning');
  let won: Leadership;
  try {
    won = await election.campaign({ signal: attempt.signal });
  } catch (error) {
    if (!attempt.signal.aborted) report('error', { message: (error as Error).message });
    return;
  } finally {
    campaign = undefined;
  }
  leadership = won;
  report('leader', { rvn: won.lock.recordVersionNumber, leaseMs: won.lock.leaseDuration });
  ticker = setInterval(() => checkLeadership(won), LEADING_TICK_MS);
  won.signal.addEventListener('abort', () => checkLeadership(won), { once: true });
}

/** Logs `leading` while the lock is safe; on the first failed check, logs `lost` and campaigns again. */
function checkLeadership(mine: Leadership): void {
  if (leadership !== mine) return;
  const t = now();
  if (mine.isLeader) {
    report('leading', { t });
    return;
  }
  endTerm();
  report('lost', { reason: (mine.signal.reason as Error | undefined)?.message });
  void campaignOnce();
}

function endTerm(): Leadership | undefined {
  const mine = leadership;
  clearInterval(ticker);
  ticker = undefined;
  leadership = undefined;
  return mine;
}

async function resign(): Promise<void> {
  const mine = endTerm(); // no `leading` after this line: the term ends before the release is sent
  if (mine === undefined) return;
  const confirmed = await mine.resign();
  report('resigned', { confirmed });
}

async function stop(): Promise<void> {
  if (stopping) return;
  stopping = true;
  campaign?.abort();
  try {
    await resign();
    await client.close();
  } finally {
    dynamoDB.destroy();
    report('stopped');
    process.exit(0);
  }
}

const commands = createInterface({ input: process.stdin });
commands.on('line', (line) => {
  const command = line.trim();
  if (command === 'resign') void resign();
  else if (command === 'campaign') void campaignOnce();
  else if (command === 'stop') void stop();
});
commands.on('close', () => void stop());
process.on('SIGTERM', () => void stop());

void campaignOnce();
