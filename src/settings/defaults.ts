/**
 * Every default of the library's options, frozen, each with its reason. One
 * object per options type, keyed by the option's name. Where the Java client
 * has the option, its default is kept (PROTOCOL.md §8), so that a table
 * shared with Java clients behaves alike whichever client took a lock.
 */
import { DEFAULT_PARTITION_KEY_NAME, MAX_BATCH_STATEMENTS } from '../protocol/index.js';

/** Defaults of the `LockClient` options (`LockClientSettings`). */
export const CLIENT_DEFAULTS = Object.freeze({
  /** Java's, so that a table made by either client fits the other. */
  partitionKeyName: DEFAULT_PARTITION_KEY_NAME,
  /** Java's 20 s: a dead holder's lock passes on about this long after its last heartbeat. */
  leaseDuration: 20_000,
  /** Java's: a held lock is kept without the caller's help. */
  backgroundHeartbeats: true,
  /**
   * Batches take a quarter of these slots: 8 calls of 25 heartbeats already
   * move more heartbeats a second, at DynamoDB's usual latency, than one
   * Node process can prepare (BENCHMARKS.md); more would only hold memory.
   */
  heartbeatConcurrency: 32,
  /** The most statements DynamoDB takes in one call: a client that fell behind catches up in the fewest calls. */
  heartbeatBatchSize: MAX_BATCH_STATEMENTS,
  /** Java's: keeping a lock whose heartbeat was not applied is unsafe, so only on request. */
  holdLockOnServiceUnavailable: false,
  /** Java's. */
  maxLockObservationCacheSize: 10_000,
  /** Safety first: on such a table two Regions can grant one lock; accepting that is the user's call. */
  allowEventuallyConsistentGlobalTable: false,
});

/**
 * The `heartbeatPeriod` of a client whose lease is `leaseDuration` ms, when
 * the option is not set: a quarter of the lease, Java's ratio (5 s in 20 s),
 * so that one late heartbeat never costs a lock, whatever lease is chosen.
 */
export function defaultHeartbeatPeriod(leaseDuration: number): number {
  return Math.max(1, Math.floor(leaseDuration / 4));
}

/**
 * The `safetyMargin` of a lock whose lease is `leaseDuration` ms, when the
 * client option is not set: a tenth of the lease, room for the time between a
 * check and the act it guards that grows with the lease, while nine tenths
 * stay for heartbeats to get through.
 */
export function defaultSafetyMargin(leaseDuration: number): number {
  return Math.round(leaseDuration / 10);
}

/** Defaults of `acquireLock` and `tryAcquireLock` (`AcquireLockOptions`), all Java's (PROTOCOL.md §8.2). */
export const ACQUIRE_DEFAULTS = Object.freeze({
  /** A waiter notices a release within a second, at one read a second. */
  refreshPeriod: 1_000,
  /** Beyond the first holder's lease: enough to see one more heartbeat or a takeover come through. */
  additionalTimeToWaitForLock: 1_000,
  replaceData: true,
  /**
   * Never stand aside, as Java: a client that re-takes a lock nobody else
   * wants pays nothing, and contention on one key is rare. Turns cost a
   * contended lock up to a third of its critical sections (BENCHMARKS.md
   * "Contention"), a price only those who need even shares should pay.
   */
  turnLength: Infinity,
  /** Deleting leaves the table as it was before the lock was taken. */
  deleteLockOnRelease: true,
});

/** Defaults of `invocationDeadline` (`InvocationDeadline`, hold/lease-end.ts). */
export const LEASE_END_DEFAULTS = Object.freeze({
  /**
   * AWS Lambda ends a runtime that has not shut down within 2,000 ms of the
   * start of its Shutdown phase with SIGKILL (its documented cap on that
   * phase, extensions included), so a process stopped at its deadline is
   * gone 2 s later at the most.
   */
  killOverrunMs: 2_000,
});

/** Defaults of `withLock` beyond the acquire options (`WithLockOptions`); also the bound of the release that ends an election's `lead` and the CLI's `run`. */
export const WITH_LOCK_DEFAULTS = Object.freeze({
  /**
   * DynamoDB answers in milliseconds, and a release that fails costs only
   * the rest of the lease: one attempt of 5 s, not a retry that outlives the
   * routine.
   */
  releaseTimeout: 5_000,
});

/** Defaults of `getAllLocks` and `getLocksByPartitionKey` (`ListLocksOptions`). */
export const LIST_LOCKS_DEFAULTS = Object.freeze({
  /** Unlike Java's eventually consistent listing: a lock just taken or released shows as such. */
  consistentRead: true,
});

/** Defaults of `collectAbandoned` (`CollectAbandonedOptions`) and `dynamodb-lock gc`. */
export const COLLECT_DEFAULTS = Object.freeze({
  /** Room for leases of minutes, while a scheduled pass still ends well before the next one starts. */
  maxDuration: 600_000,
  /** `maxDuration` already leaves the leases it cannot wait out; a cap is for leaving long ones sooner. */
  maxLease: Infinity,
  /** Enough to delete thousands of items a second at DynamoDB's usual latency, few beside the acquisitions' 96. */
  concurrency: 8,
});

/** Defaults of `createLockTable` and `createFencingTable` (`CreateLockTableOptions`). */
export const CREATE_TABLE_DEFAULTS = Object.freeze({
  /** On-demand: a lock table's traffic follows the locks taken, with no capacity to plan or to be throttled by. */
  billingMode: 'PAY_PER_REQUEST',
  /** A new table is usually ACTIVE within a minute; five allow for a slow region without waiting for ever. */
  activeTimeout: 300_000,
});

/** Defaults of `watchLock` (`WatchLockOptions`). */
export const WATCH_DEFAULTS = Object.freeze({
  /** One consistent read a second: changes show within a second at the cost of one read unit. */
  pollInterval: 1_000,
});

/** Defaults of `LeaderElection` (`LeaderElectionOptions`, `LeadOptions`). */
export const ELECTION_DEFAULTS = Object.freeze({
  /** Half the acquire default: a resignation is noticed at a waiting candidate's next read, so this bounds a hand-over. */
  refreshPeriod: 500,
  /** As `watchLock`: observers follow the leader as a watcher follows a lock. */
  pollInterval: WATCH_DEFAULTS.pollInterval,
  /** A replica that lost leadership stands again, so that the election always has candidates. */
  recampaign: true,
});

/** Defaults of `DynamoDBLocal` (`StartDynamoDBLocalOptions`, `dynamodb-lock/testing`). */
export const DYNAMODB_LOCAL_DEFAULTS = Object.freeze({
  /** The server, a JVM, answers within seconds; a minute allows for a busy CI machine. */
  startupTimeoutMs: 60_000,
  /** A port found free may be taken before the server binds it: five tries make that race negligible. */
  maxAttempts: 5,
  /**
   * The JVM exits within a second of SIGTERM; SIGKILL after that, so that a stuck one never outlives the
   * tests and `stop()` ends within Jest's default hook timeout (5 s). The data is in memory: nothing to lose.
   */
  killGraceMs: 2_000,
  /** The Java on the PATH. */
  java: 'java',
  /** Tests start a server per file or per run: its start matters more than its peak. */
  optimizeFor: 'startup' as const,
});
