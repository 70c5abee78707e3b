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
export type { LockState } from './held-lock.js';
export type { AcquireLockOptions } from './acquire-lock.js';
export type { CreateLockTableOptions } from './lock-table.js';
export {
  CLIENT_DEFAULTS,
  ACQUIRE_DEFAULTS,
  type LockClientOptions,
  type LockClientSettings,
  type DynamoDBClientSource,
} from './options.js';
export type { MonotonicClock } from './clock.js';
export * from './errors.js';
export type { AdditionalAttributes, LockRecord } from './protocol/index.js';
