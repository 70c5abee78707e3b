/**
 * One chaos worker process: loops acquire → critical section → release on
 * random keys, and logs each act with the instant its validity check passed.
 *
 *   node --import tsx chaos/worker.ts '<WorkerConfig as JSON>'
 *
 * Inside the critical section it acts only after `lock.throwIfLost()` passed
 * and while `lock.signal` is not aborted: that is the contract RELIABILITY.md
 * states for callers, so the checker judges exactly what the library promises.
 *
 * With a data table (`--fenced`), each act also writes the key's counter item
 * (chaos/fenced-writes.ts), and some acts are late on purpose: the worker
 * takes its check, stalls for longer than the lease ignoring its signal, and
 * writes anyway. Those acts are not logged as checked acts: they are judged
 * by the counter items' final state instead.
 */
import { appendFileSync } from 'node:fs';
import { setTimeout as sleep } from 'node:timers/promises';
import { isLockLostError, isLockNotGrantedError, LockClient, type Lock } from '../src/index.js';
import type { WorkerIdentity } from './driver.js';
import { nowNs, type ChaosEvent } from './events.js';
import { readCounter, writeCounter, writeCounterLate, type CounterWrite, type FencedMode } from './fenced-writes.js';
import { between, pick, seededRandom } from './random.js';
import { workerDynamoDB, type WorkerDynamoDBSettings } from './worker-dynamodb.js';

export interface WorkerConfig extends WorkerIdentity, WorkerDynamoDBSettings {
  readonly tableName: string;
  readonly keys: readonly string[];
  readonly leaseMs: number;
  readonly heartbeatMs: number;
  readonly pollMs: number;
  /** `--fenced`: the table of the counter items each act writes, whether the writes are guarded, and the fencing table of guarded runs. */
  readonly fenced?: { readonly dataTable: string; readonly mode: FencedMode; readonly fencingTable?: string | undefined };
}

/** Acts per hold and the pause before each: holds often outlast a heartbeat period, sometimes the lease. */
const ACTS_PER_HOLD: readonly [number, number] = [1, 8];
const ACT_GAP_MS: readonly [number, number] = [10, 250];
/** Before an act, how often the worker sends a manual heartbeat that changes the lease (shorter, or back to the default). */
const LEASE_CHANGE_ODDS = 0.1;
/** In `--fenced` runs, how often an act is late: it stalls past the lease after its check, then writes. */
const LATE_ODDS = 0.08;
/** How much longer than the lease a late act stalls, ms. */
const LATE_BEYOND_LEASE_MS: readonly [number, number] = [100, 600];

const config = JSON.parse(process.argv[2] ?? '') as WorkerConfig;
const random = seededRandom(config.seed);
const log = (event: ChaosEvent): void => appendFileSync(config.logFile, `${JSON.stringify(event)}\n`);

// Anything escaping the loop is a library defect the run must report, not hide: exit with a code the runner flags.
process.on('unhandledRejection', (reason) => {
  process.stderr.write(`unhandled rejection: ${String((reason as Error)?.stack ?? reason)}\n`);
  process.exit(70);
});

const dynamoDB = workerDynamoDB(config);
const counters = config.fenced === undefined ? undefined : { dynamoDB, dataTable: config.fenced.dataTable, mode: config.fenced.mode };
const client = new LockClient({
  dynamoDB,
  tableName: config.tableName,
  ownerName: `${config.worker}-pid${process.pid}`,
  leaseDuration: config.leaseMs,
  heartbeatPeriod: config.heartbeatMs,
  ...(config.fenced?.fencingTable === undefined ? {} : { fencingTableName: config.fenced.fencingTable }),
});

/** Acts while the lock is certainly held; returns how the hold ended. */
async function criticalSection(lock: Lock, key: string, acquiredRvn: string): Promise<void> {
  const acts = between(random, ...ACTS_PER_HOLD);
  for (let i = 0; i < acts; i++) {
    await sleep(between(random, ...ACT_GAP_MS));
    if (random() < LEASE_CHANGE_ODDS) await changeLease(lock);
    if (counters !== undefined && random() < LATE_ODDS) {
      const seen = await readCounter(counters, key).catch(() => undefined);
      if (seen === undefined) continue;
      const pauseMs = config.leaseMs + between(random, ...LATE_BEYOND_LEASE_MS);
      if (!logWrite(key, acquiredRvn, true, await writeCounterLate(counters, lock, key, seen, pauseMs))) return;
      continue;
    }
    // Read the clock before the check: the check vouches for every instant up to its own clock
    // read, so this one is vouched for even if a pause falls between the two reads.
    const checkedAtNs = nowNs();
    try {
      lock.throwIfLost();
      if (lock.signal.aborted) throw lock.signal.reason;
    } catch (error) {
      const kind = isLockLostError(error) ? error.kind : 'unexpected';
      log({ type: 'lost', worker: config.worker, key, acquiredRvn, atNs: nowNs(), kind });
      if (!isLockLostError(error)) throw error;
      return;
    }
    log({ type: 'act', worker: config.worker, key, acquiredRvn, checkedAtNs });
    if (counters !== undefined) {
      const seen = await readCounter(counters, key).catch(() => undefined);
      if (seen !== undefined && !logWrite(key, acquiredRvn, false, await writeCounter(counters, lock, key, seen))) return;
    }
  }
}

/** Logs a counter write; false when it showed the lock lost (the hold is over). */
function logWrite(key: string, acquiredRvn: string, late: boolean, write: CounterWrite): boolean {
  log({ type: 'write', worker: config.worker, key, acquiredRvn, late, outcome: write.outcome, atNs: nowNs() });
  if (write.lost === undefined) return true;
  log({ type: 'lost', worker: config.worker, key, acquiredRvn, atNs: nowNs(), kind: write.lost.kind });
  return false;
}

/**
 * A manual heartbeat to 60 % of the lease or back to the whole lease. Its
 * outcome may be unknown (a lost reply): the lock must then be bounded by
 * the shorter of the two, which the checker's overlap test would catch.
 */
async function changeLease(lock: Lock): Promise<void> {
  const leaseDuration = random() < 0.5 ? Math.round(config.leaseMs * 0.6) : config.leaseMs;
  try {
    await lock.sendHeartbeat({ leaseDuration });
  } catch (error) {
    // A lost lock shows at the next check; any other failure leaves it as it was.
    if (!isLockLostError(error)) return;
  }
}

async function main(): Promise<never> {
  for (;;) {
    const key = pick(random, config.keys);
    let lock: Lock;
    log({ type: 'wanting', worker: config.worker, key, atNs: nowNs() });
    try {
      lock = await client.acquireLock(key, { refreshPeriod: config.pollMs, additionalTimeToWaitForLock: config.leaseMs * 3 });
    } catch (error) {
      // Not granted in time, or a fault the acquisition gave up on: try again, as a real caller would.
      if (!isLockNotGrantedError(error)) process.stderr.write(`acquire failed: ${(error as Error).name}\n`);
      await sleep(between(random, 10, 100));
      continue;
    }
    // Heartbeats change the lock's RVN; the acquisition's own RVN names the hold in the log.
    const acquiredRvn = lock.recordVersionNumber;
    log({ type: 'acquired', worker: config.worker, key, rvn: acquiredRvn, atNs: nowNs() });
    await criticalSection(lock, key, acquiredRvn);
    // A failed release only lets the lock lapse; the next holder waits out the lease.
    await lock.release({ bestEffort: true }).catch(() => false);
    log({ type: 'released', worker: config.worker, key, acquiredRvn, atNs: nowNs() });
    await sleep(between(random, 0, 100));
  }
}

await main();
