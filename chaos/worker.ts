/**
 * One chaos worker process: loops acquire → critical section → release on
 * random keys, and logs each act with the instant its validity check passed.
 * In `--groups` runs the slots from `groupSlotsFrom` on are group workers
 * instead: each takes 2–4 random keys at once with acquireLocks, and acts
 * only once the check of every lock of the group passed. In `--semaphores`
 * runs they are semaphore workers: each asks in turn for 1 to N−1 permits of
 * the semaphore of N (acquirePermit for one, acquirePermits for more), and
 * acts only once the check of every permit it holds passed. In `--gc` runs
 * the last slot runs collectAbandoned instead (chaos/gc-worker.ts).
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
import { isLockLostError, isLockNotGrantedError, LockClient, type Lock, type LockGroup } from '../src/index.js';
import type { WorkerIdentity } from './driver.js';
import { collectAbandonedForever } from './gc-worker.js';
import { nowNs, type ChaosEvent } from './events.js';
import { readCounter, writeCounter, writeCounterLate, type CounterWrite, type FencedMode } from './fenced-writes.js';
import { between, pick, sample, seededRandom } from './random.js';
import { workerDynamoDB, type WorkerDynamoDBSettings } from './worker-dynamodb.js';

export interface WorkerConfig extends WorkerIdentity, WorkerDynamoDBSettings {
  readonly tableName: string;
  readonly keys: readonly string[];
  readonly leaseMs: number;
  readonly heartbeatMs: number;
  readonly pollMs: number;
  /** `--fenced`: the table of the counter items each act writes, whether the writes are guarded, and the fencing table of guarded runs. */
  readonly fenced?: { readonly dataTable: string; readonly mode: FencedMode; readonly fencingTable?: string | undefined };
  /** `--groups`: the slots from this one on are group workers. */
  readonly groupSlotsFrom?: number | undefined;
  /** `--semaphores`: the slots from `slotsFrom` on take permits of the semaphore `name` of `permits` permits. */
  readonly semaphore?: { readonly name: string; readonly permits: number; readonly slotsFrom: number } | undefined;
  /** `--gc`: the slot that runs collectAbandoned. */
  readonly gcSlot?: number | undefined;
}

/** Acts per hold and the pause before each: holds often outlast a heartbeat period, sometimes the lease. */
const ACTS_PER_HOLD: readonly [number, number] = [1, 8];
const ACT_GAP_MS: readonly [number, number] = [10, 250];
/** How many keys a group worker takes at once (at most all of them). */
const GROUP_SIZE: readonly [number, number] = [2, 4];
/** Before an act, how often the worker sends a manual heartbeat that changes the lease (shorter, or back to the default). */
const LEASE_CHANGE_ODDS = 0.1;
/**
 * In `--fenced` runs, how often an act is late: it stalls past the lease
 * after its check, then writes. Besides, every worker process owes one
 * late write, sent at the first act of its first hold that gets past the
 * check, so that every run sends late writes however few holds its timing
 * allows: a run of six workers on two keys under CI's load left one
 * designated late writer no hold at all (it started 8 s late, then waited
 * 6 s behind the others).
 */
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
let owesLateWrite = true;
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
    if (counters !== undefined && (owesLateWrite || random() < LATE_ODDS)) {
      const seen = await readCounter(counters, key).catch(() => undefined);
      if (seen === undefined) continue;
      const pauseMs = config.leaseMs + between(random, ...LATE_BEYOND_LEASE_MS);
      const write = await writeCounterLate(counters, lock, key, seen, pauseMs);
      // One the check refused before the pause was never sent: the next hold owes it still.
      if (write.outcome !== 'refusedLocally') owesLateWrite = false;
      if (!logWrite(key, acquiredRvn, true, write)) return;
      continue;
    }
    const checkedAtNs = stillHeld(lock, [{ key, rvn: acquiredRvn }]);
    if (checkedAtNs === undefined) return;
    log({ type: 'act', worker: config.worker, key, acquiredRvn, checkedAtNs });
    if (counters !== undefined) {
      const seen = await readCounter(counters, key).catch(() => undefined);
      if (seen !== undefined && !logWrite(key, acquiredRvn, false, await writeCounter(counters, lock, key, seen))) return;
    }
  }
}

/**
 * The instant up to which `held` (a lock, or a group: every lock of it) is
 * vouched for; or, once it is lost, undefined, after logging the loss of
 * each of `members`' holds. Reads the clock before the check: the check
 * vouches for every instant up to its own clock read, so this one is vouched
 * for even if a pause falls between the two reads.
 */
function stillHeld(
  held: Pick<Lock | LockGroup, 'throwIfLost' | 'signal'>,
  members: readonly { key: string; rvn: string }[],
): string | undefined {
  const checkedAtNs = nowNs();
  try {
    held.throwIfLost();
    if (held.signal.aborted) throw held.signal.reason;
    return checkedAtNs;
  } catch (error) {
    const kind = isLockLostError(error) ? error.kind : 'unexpected';
    const atNs = nowNs();
    for (const { key, rvn } of members) log({ type: 'lost', worker: config.worker, key, acquiredRvn: rvn, atNs, kind });
    if (!isLockLostError(error)) throw error;
    return undefined;
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

/** The acquisition's options of both kinds of worker: a waiter gives up after three leases, then asks again. */
const waiting = { refreshPeriod: config.pollMs, additionalTimeToWaitForLock: config.leaseMs * 3 };

/** A caller's answer to a failed acquisition: not granted in time, or a fault it gave up on. Try again, as a real caller would. */
async function retryLater(error: unknown): Promise<void> {
  if (!isLockNotGrantedError(error)) process.stderr.write(`acquire failed: ${(error as Error).name}\n`);
  await sleep(between(random, 10, 100));
}

/** Acts while every lock of the group (or the one lock) is certainly held. */
async function groupSection(group: Lock | LockGroup, members: readonly { key: string; rvn: string }[]): Promise<void> {
  const acquiredRvns = members.map((member) => member.rvn);
  const acts = between(random, ...ACTS_PER_HOLD);
  for (let i = 0; i < acts; i++) {
    await sleep(between(random, ...ACT_GAP_MS));
    // The group is over as a whole once any of its locks is lost: each member's hold ends then.
    const checkedAtNs = stillHeld(group, members);
    if (checkedAtNs === undefined) return;
    log({ type: 'groupAct', worker: config.worker, acquiredRvns, checkedAtNs });
  }
}

/** Acts under every lock of `held`, releases it, and logs the end of each member's hold. */
async function actAndRelease(held: Lock | LockGroup, members: readonly { key: string; rvn: string }[]): Promise<void> {
  await groupSection(held, members);
  await held.release({ bestEffort: true }).catch(() => false);
  const atNs = nowNs();
  for (const { key, rvn } of members) log({ type: 'released', worker: config.worker, key, acquiredRvn: rvn, atNs });
  await sleep(between(random, 0, 100));
}

async function groupMain(): Promise<never> {
  for (;;) {
    const keys = sample(random, config.keys, between(random, GROUP_SIZE[0], Math.min(GROUP_SIZE[1], config.keys.length)));
    log({ type: 'groupWanting', worker: config.worker, keys, atNs: nowNs() });
    let group: LockGroup;
    try {
      group = await client.acquireLocks(keys, waiting);
    } catch (error) {
      await retryLater(error);
      continue;
    }
    const members = group.locks.map((lock) => ({ key: lock.partitionKey, rvn: lock.recordVersionNumber }));
    log({ type: 'groupAcquired', worker: config.worker, members, atNs: nowNs() });
    await actAndRelease(group, members);
  }
}

/** Asks in turn for 1 to N−1 permits (never the whole semaphore, so that a grant always shares it), from a count each slot starts at. */
async function semaphoreMain({ name, permits }: { name: string; permits: number }): Promise<never> {
  const most = Math.max(1, permits - 1);
  for (let ask = config.slot; ; ask++) {
    const count = 1 + (ask % most);
    log({ type: 'permitsWanting', worker: config.worker, semaphore: name, permits, count, atNs: nowNs() });
    // Half the permits are kept as released items: a `--gc` run then watches items that waiters take meanwhile.
    const options = { ...waiting, permits, deleteLockOnRelease: random() < 0.5 };
    let held: Lock | LockGroup;
    try {
      held = count === 1 ? await client.acquirePermit(name, options) : await client.acquirePermits(name, { ...options, count });
    } catch (error) {
      await retryLater(error);
      continue;
    }
    const members = ('locks' in held ? held.locks : [held]).map((lock) => ({ key: lock.partitionKey, rvn: lock.recordVersionNumber }));
    log({ type: 'permitsAcquired', worker: config.worker, semaphore: name, members, atNs: nowNs() });
    await actAndRelease(held, members);
  }
}

async function main(): Promise<never> {
  for (;;) {
    const key = pick(random, config.keys);
    let lock: Lock;
    log({ type: 'wanting', worker: config.worker, key, atNs: nowNs() });
    try {
      lock = await client.acquireLock(key, waiting);
    } catch (error) {
      await retryLater(error);
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

function role(): Promise<never> {
  if (config.slot === config.gcSlot) return collectAbandonedForever({ config, client, dynamoDB, log });
  if (config.semaphore !== undefined && config.slot >= config.semaphore.slotsFrom) return semaphoreMain(config.semaphore);
  return config.groupSlotsFrom !== undefined && config.slot >= config.groupSlotsFrom ? groupMain() : main();
}

await role();
