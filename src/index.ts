/**
 * The package's entry point: every name a user imports, listed one by one,
 * so that nothing internal is public by accident.
 */
export { LockClient } from './lock-client.js';
export type { LockKeyOptions, GetLockOptions, ListLocksOptions, CloseOptions } from './lock-client-options.js';
export type { WithLockOptions } from './with-lock.js';
export type { LockClientEvents } from './lock-client-events.js';
export type { Subscription } from './base/events.js';
export { Lock, LockSnapshot, type ReleaseLockOptions, type SendHeartbeatOptions } from './lock.js';
export type { LockState } from './hold/lock-state.js';
export { LockGroup } from './lock-group.js';
export type { AcquireLockOptions } from './acquire/acquire-options.js';
export type { AdoptLockOptions } from './acquire/adopt-lock.js';
export type { InvocationDeadline } from './hold/lease-end.js';
export type { AcquireLocksOptions, GroupKey } from './acquire/group-options.js';
export type { CreateLockTableOptions } from './dynamodb/lock-table.js';
export type { AcquirePermitOptions, AcquirePermitsOptions } from './semaphore/permit-options.js';
export { MAX_PERMITS } from './semaphore/permit-options.js';
export { PERMITS_ATTRIBUTE } from './semaphore/permit-keys.js';
export { SemaphorePermitsMismatchError, isSemaphorePermitsMismatchError } from './semaphore/permits-mismatch-error.js';
export type { AbandonedItemsReport, CollectAbandonedOptions, LeftItem, LeftReason, SeenLock } from './gc/collect-options.js';
export { NumberValue, type AdditionalAttributes, type NativeAttributeValue, type LockHandOff } from './protocol/index.js';

export type { LockClientOptions, LockClientSettings, DynamoDBClientSource, DynamoDBSender } from './settings/options.js';
export type { MonotonicClock } from './base/clock.js';
export type { Logger } from './base/logger.js';
export {
  CLIENT_DEFAULTS,
  ACQUIRE_DEFAULTS,
  LEASE_END_DEFAULTS,
  WITH_LOCK_DEFAULTS,
  LIST_LOCKS_DEFAULTS,
  CREATE_TABLE_DEFAULTS,
  ELECTION_DEFAULTS,
  WATCH_DEFAULTS,
  COLLECT_DEFAULTS,
} from './settings/defaults.js';

export {
  DynamoDBLockError,
  isDynamoDBLockError,
  LockNotGrantedError,
  isLockNotGrantedError,
  DynamoDBUnavailableError,
  isDynamoDBUnavailableError,
  DynamoDBTooSlowError,
  isDynamoDBTooSlowError,
  DynamoDBTimeoutError,
  isDynamoDBTimeoutError,
  LockCurrentlyUnavailableError,
  isLockCurrentlyUnavailableError,
  LockLostError,
  isLockLostError,
  LockTableDoesNotExistError,
  isLockTableDoesNotExistError,
  LockTableAlreadyExistsError,
  isLockTableAlreadyExistsError,
  LockTableSchemaMismatchError,
  isLockTableSchemaMismatchError,
  SessionMonitorNotSetError,
  isSessionMonitorNotSetError,
  MalformedLockItemError,
  isMalformedLockItemError,
  InvalidArgumentError,
  isInvalidArgumentError,
  LockClientClosedError,
  isLockClientClosedError,
  LockClientCloseError,
  isLockClientCloseError,
  LockHandOffError,
  isLockHandOffError,
  type LockHandOffErrorCode,
  type LockHolder,
  type LockLossKind,
  type InvalidArgumentCode,
} from './base/errors.js';
export { LockTableReplicationError, isLockTableReplicationError, type LockTableReplicationCode } from './base/lock-table-replication-error.js';
export { StatementFailedError, isStatementFailedError } from './dynamodb/send-statement-batch.js';

export { MAX_GUARDED_ITEMS, type GuardedWriteOptions } from './hold/guarded-write.js';
export {
  GuardedWriteCanceledError,
  isGuardedWriteCanceledError,
  GuardedWriteOutcomeUnknownError,
  isGuardedWriteOutcomeUnknownError,
  type GuardedWriteCancellation,
} from './hold/guarded-write-errors.js';

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
