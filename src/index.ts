export {
  LockClient,
  type LockKeyOptions,
  type ListLocksOptions,
  type LockClientEvents,
  type WithLockOptions,
  type CloseOptions,
} from './lock-client.js';
export type { Subscription } from './events.js';
export { Lock, LockSnapshot, type ReleaseLockOptions, type SendHeartbeatOptions } from './lock.js';
export type { LockState } from './hold/held-lock.js';
export type { AcquireLockOptions } from './acquire/acquire-lock.js';
export type { CreateLockTableOptions } from './dynamodb/lock-table.js';
export type { LockClientOptions, LockClientSettings, DynamoDBClientSource } from './options.js';
export {
  CLIENT_DEFAULTS,
  ACQUIRE_DEFAULTS,
  WITH_LOCK_DEFAULTS,
  LIST_LOCKS_DEFAULTS,
  CREATE_TABLE_DEFAULTS,
  ELECTION_DEFAULTS,
  WATCH_DEFAULTS,
} from './defaults.js';
export type { MonotonicClock } from './clock.js';
export type { Logger } from './logger.js';
export type { DynamoDBSender } from './dynamodb/dynamodb-sender.js';
export * from './errors.js';
export { StatementFailedError, isStatementFailedError } from './dynamodb/send-statement-batch.js';
export { MAX_GUARDED_ITEMS, type GuardedWriteOptions } from './hold/guarded-write.js';
export {
  GuardedWriteCanceledError,
  GuardedWriteOutcomeUnknownError,
  isGuardedWriteCanceledError,
  isGuardedWriteOutcomeUnknownError,
  type GuardedWriteCancellation,
} from './guarded-write-errors.js';
export {
  LeaderElection,
  type LeaderElectionOptions,
  type CampaignOptions,
  type LeadOptions,
  type ObserveOptions,
} from './election/leader-election.js';
export { Leadership, type ResignOptions } from './election/leadership.js';
export type { Leader } from './election/leader.js';
export { AlreadyCampaigningError, isAlreadyCampaigningError } from './election/already-campaigning-error.js';
export { watchLock, type WatchLockOptions } from './election/watch-lock.js';
export type { AdditionalAttributes, LockRecord } from './protocol/index.js';
