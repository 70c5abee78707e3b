/**
 * One worker process of a `--load` run: a single LockClient, built on the
 * README's DynamoDB client, that keeps hundreds of locks with background
 * heartbeats while it asks for many others at once:
 *
 * - keeps its slot's `held` locks (taking a lost one back after a while);
 * - waits, in waves, on locks other slots hold (polls every `pollMs`);
 * - takes its `bulk` locks in bursts (`Promise.all` of `acquireLock` and
 *   `tryAcquireLock`) and releases them soon after;
 * - contends for every hot key, and campaigns in every election.
 *
 *   node --import tsx chaos/load-worker.ts '<LoadWorkerConfig as JSON>'
 *
 * Every lock it holds is checked about once a second and each passed check
 * is logged as an act, so the checker judges mutual exclusion under load as
 * in the plain run. Every `lost` event of the client is logged with its kind.
 * Each acquisition call has a bound (acquisition-watch.ts); calls that
 * outlive it are logged.
 */
import { appendFileSync } from 'node:fs';
import { setTimeout as sleep } from 'node:timers/promises';
import { LeaderElection, LockClient, type Lock } from '../src/index.js';
import { AcquisitionWatch } from './acquisition-watch.js';
import type { WorkerIdentity } from './driver.js';
import { nowNs, type ChaosEvent } from './events.js';
import { accessKeyOf, bulkKey, electionKey, heldKey, hotKey } from './load-keys.js';
import { between, seededRandom } from './random.js';
import { watchStalls } from './stall-watch.js';
import { workerDynamoDB, type WorkerDynamoDBSettings } from './worker-dynamodb.js';

/** How much a load worker does at once. */
export interface LoadShape {
  /** Locks each worker keeps with background heartbeats. */
  readonly held: number;
  /** Locks held by other workers that each wave waits on. */
  readonly waits: number;
  /** Locks each burst asks for at once. */
  readonly burst: number;
  /** Keys every worker contends for, one acquisition at a time per key. */
  readonly hotKeys: number;
  /** Elections every worker campaigns in. */
  readonly elections: number;
}

export interface LoadWorkerConfig extends WorkerIdentity, WorkerDynamoDBSettings {
  readonly tableName: string;
  readonly slots: number;
  readonly leaseMs: number;
  readonly heartbeatMs: number;
  readonly pollMs: number;
  readonly marginMs: number;
  readonly load: LoadShape;
}

/** Milliseconds between the check rounds over every held lock. */
const CHECK_ROUND_MS = 1_000;
/** Milliseconds between two waves, two bursts; how long a burst's or a won wait's locks are kept. */
const WAVE_GAP_MS: readonly [number, number] = [500, 3_000];
const BURST_GAP_MS: readonly [number, number] = [1_000, 4_000];
const SHORT_HOLD_MS: readonly [number, number] = [100, 1_500];

const config = JSON.parse(process.argv[2] ?? '') as LoadWorkerConfig;
const random = seededRandom(config.seed);
const log = (...events: ChaosEvent[]): void => {
  if (events.length > 0) appendFileSync(config.logFile, events.map((e) => `${JSON.stringify(e)}\n`).join(''));
};

process.on('unhandledRejection', (reason) => {
  process.stderr.write(`unhandled rejection: ${String((reason as Error)?.stack ?? reason)}\n`);
  process.exit(70);
});

const dynamoDB = workerDynamoDB(config, accessKeyOf(config.worker));
const client = new LockClient({
  dynamoDB,
  tableName: config.tableName,
  ownerName: `${config.worker}-pid${process.pid}`,
  leaseDuration: config.leaseMs,
  heartbeatPeriod: config.heartbeatMs,
});
const watch = new AcquisitionWatch({ worker: config.worker, log, leaseMs: config.leaseMs, pollMs: config.pollMs, marginMs: config.marginMs });

/** Every lock this worker holds now, by key, with the RVN that names the hold in the log. */
const holds = new Map<string, { readonly lock: Lock; readonly acquiredRvn: string }>();

client.on('lost', ({ lock, error }) => {
  const hold = holds.get(lock.partitionKey);
  const mine = hold?.lock === lock ? hold : undefined;
  if (mine !== undefined) holds.delete(lock.partitionKey);
  log({
    type: 'lost',
    worker: config.worker,
    key: lock.partitionKey,
    acquiredRvn: mine?.acquiredRvn ?? lock.recordVersionNumber,
    atNs: nowNs(),
    kind: error.kind,
    reason: error.message,
  });
});

// Where a lock's time went before a loss: heartbeats that left late waited in this client, not at the server.
client.on('heartbeat', ({ lock, lagMs }) => {
  if (lagMs >= config.heartbeatMs / 2) log({ type: 'lateHeartbeat', worker: config.worker, key: lock.partitionKey, atNs: nowNs(), lagMs });
});

client.on('heartbeatError', ({ lock, error, willRetry }) => {
  const name = error instanceof Error ? error.name : typeof error;
  log({ type: 'heartbeatError', worker: config.worker, key: lock.partitionKey, atNs: nowNs(), error: name, willRetry });
});

/** Starts a hold: logs it and its first checked act. */
function held(lock: Lock): void {
  const acquiredRvn = lock.recordVersionNumber;
  holds.set(lock.partitionKey, { lock, acquiredRvn });
  log({ type: 'acquired', worker: config.worker, key: lock.partitionKey, rvn: acquiredRvn, atNs: nowNs() });
  checkRound([lock.partitionKey]);
}

/** Releases (best effort: a failed release only lets the lock lapse) and ends the hold. */
async function release(lock: Lock): Promise<void> {
  await lock.release({ bestEffort: true }).catch(() => false);
  const hold = holds.get(lock.partitionKey);
  if (hold?.lock !== lock) return; // lost meanwhile, and logged as such
  holds.delete(lock.partitionKey);
  log({ type: 'released', worker: config.worker, key: lock.partitionKey, acquiredRvn: hold.acquiredRvn, atNs: nowNs() });
}

/** Acts on every given hold whose check passes, the clock read before the check (as in worker.ts). */
function checkRound(keys: Iterable<string> = holds.keys()): void {
  const acts: ChaosEvent[] = [];
  for (const key of keys) {
    const hold = holds.get(key);
    if (hold === undefined) continue;
    const checkedAtNs = nowNs();
    try {
      hold.lock.throwIfLost();
    } catch {
      continue; // its `lost` event says how
    }
    if (!hold.lock.signal.aborted) acts.push({ type: 'act', worker: config.worker, key, acquiredRvn: hold.acquiredRvn, checkedAtNs });
  }
  log(...acts);
}

/** Keeps one of the slot's held locks, taking it back after a loss. */
async function keep(key: string): Promise<never> {
  for (;;) {
    const waitMs = 2 * config.leaseMs;
    const lock = await watch.acquire(key, waitMs, () =>
      client.acquireLock(key, { refreshPeriod: config.pollMs, additionalTimeToWaitForLock: waitMs }),
    );
    if (lock !== undefined) {
      held(lock);
      await new Promise((resolve) => lock.signal.addEventListener('abort', resolve, { once: true }));
    }
    await sleep(between(random, 200, 1_000));
  }
}

/** Waves of waits on locks other slots hold: most end not granted; a dead or starved holder's lock is won. */
async function waitOnOthers(): Promise<never> {
  const others = Array.from({ length: config.slots }, (_, i) => i + 1).filter((slot) => slot !== config.slot);
  for (;;) {
    await sleep(between(random, ...WAVE_GAP_MS));
    if (others.length === 0) continue;
    const keys = new Set<string>();
    while (keys.size < Math.min(config.load.waits, others.length * config.load.held)) {
      keys.add(heldKey(others[between(random, 0, others.length - 1)]!, between(random, 0, config.load.held - 1)));
    }
    await Promise.all(
      [...keys].map(async (key) => {
        const waitMs = between(random, 0, config.leaseMs);
        const lock = await watch.acquire(key, waitMs, () =>
          client.acquireLock(key, { refreshPeriod: config.pollMs, additionalTimeToWaitForLock: waitMs }),
        );
        if (lock !== undefined) await holdBriefly(lock);
      }),
    );
  }
}

/** Bursts on the slot's bulk keys: half `acquireLock`, half `tryAcquireLock`, all at once. */
async function bursts(): Promise<never> {
  for (;;) {
    await sleep(between(random, ...BURST_GAP_MS));
    const waitMs = between(random, 0, config.leaseMs);
    const options = { refreshPeriod: config.pollMs, additionalTimeToWaitForLock: waitMs };
    const locks = await Promise.all(
      Array.from({ length: config.load.burst }, (_, i) => {
        const key = bulkKey(config.slot, i);
        return watch.acquire(key, waitMs, () => (i % 2 === 0 ? client.acquireLock(key, options) : client.tryAcquireLock(key, options)));
      }),
    );
    const won = locks.filter((lock): lock is Lock => lock !== undefined);
    for (const lock of won) held(lock);
    await sleep(between(random, ...SHORT_HOLD_MS));
    await Promise.all(won.map(release));
  }
}

/** Contends for one hot key, again and again. */
async function contend(key: string): Promise<never> {
  for (;;) {
    const waitMs = between(random, 0, 2 * config.leaseMs);
    const lock = await watch.acquire(key, waitMs, () =>
      client.acquireLock(key, { refreshPeriod: config.pollMs, additionalTimeToWaitForLock: waitMs }),
    );
    if (lock !== undefined) await holdBriefly(lock);
    await sleep(between(random, 0, 200));
  }
}

/** Campaigns in one election, leads for a while, resigns, campaigns again. */
async function campaign(key: string): Promise<never> {
  const election = new LeaderElection(client, key, { refreshPeriod: config.pollMs });
  for (;;) {
    await election
      .lead(async (signal, leadership) => {
        held(leadership.lock);
        const until = performance.now() + between(random, ...SHORT_HOLD_MS) * 2;
        while (!signal.aborted && performance.now() < until) await sleep(between(random, 50, 300));
        // Resigning follows at once: end the hold first, or the release could be logged after the next term's start.
        const hold = holds.get(key);
        if (hold?.lock === leadership.lock) {
          holds.delete(key);
          log({ type: 'released', worker: config.worker, key, acquiredRvn: hold.acquiredRvn, atNs: nowNs() });
        }
      })
      .catch((error: unknown) => watch.failed(error));
    await sleep(between(random, 100, 1_000));
  }
}

async function holdBriefly(lock: Lock): Promise<void> {
  held(lock);
  await sleep(between(random, ...SHORT_HOLD_MS));
  await release(lock);
}

watchStalls(config.worker, log);
setInterval(() => checkRound(), CHECK_ROUND_MS);
setInterval(() => watch.sweep(), CHECK_ROUND_MS);
await Promise.all([
  ...Array.from({ length: config.load.held }, (_, i) => keep(heldKey(config.slot, i))),
  waitOnOthers(),
  bursts(),
  ...Array.from({ length: config.load.hotKeys }, (_, j) => contend(hotKey(j))),
  ...Array.from({ length: config.load.elections }, (_, j) => campaign(electionKey(j))),
]);
