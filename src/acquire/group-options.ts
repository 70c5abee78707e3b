/** The options of one `acquireLocks` call, and their checks before any request. */
import { InvalidArgumentError } from '../base/errors.js';
import { describeLockKey, lockId, type LockKey } from '../base/lock-key.js';
import { maxGroupSize, validateGroupSize } from '../protocol/index.js';
import { lockItemOf, validateAcquireKey, type AcquireLockOptions, type AcquireSettings, type Resolved } from './acquire-options.js';

/** One lock of a group: its partition key, or its partition and sort key. */
export type GroupKey = string | LockKey;

/**
 * Options of one `acquireLocks` call: those of `acquireLock` that make sense
 * for locks taken together. `data`, `leaseDuration` and
 * `additionalAttributes` apply to every lock of the group.
 */
export type AcquireLocksOptions = Pick<
  AcquireLockOptions,
  | 'data'
  | 'replaceData'
  | 'deleteLockOnRelease'
  | 'refreshPeriod'
  | 'turnLength'
  | 'additionalTimeToWaitForLock'
  | 'leaseDuration'
  | 'additionalAttributes'
  | 'acquireReleasedLocksConsistently'
  | 'signal'
>;

/** Every option `acquireLocks` takes, by name. */
export const ACQUIRE_LOCKS_OPTION_NAMES: Readonly<Record<keyof AcquireLocksOptions, true>> = {
  data: true,
  replaceData: true,
  deleteLockOnRelease: true,
  refreshPeriod: true,
  turnLength: true,
  additionalTimeToWaitForLock: true,
  leaseDuration: true,
  additionalAttributes: true,
  acquireReleasedLocksConsistently: true,
  signal: true,
};

/** The keys of a group as lock keys (a string is a partition key alone). */
export function groupKeysOf(keys: readonly GroupKey[]): LockKey[] {
  const list: unknown = keys;
  if (!Array.isArray(list)) throw new InvalidArgumentError('INVALID_GROUP', 'acquireLocks takes an array of keys');
  // Every index, holes of a sparse array too; a key that is no string nor key object is refused by the key check, as a single lock's is.
  return Array.from(keys, (key: GroupKey | null | undefined) =>
    typeof key === 'object' && key !== null ? { partitionKey: key.partitionKey, sortKey: key.sortKey } : { partitionKey: key as string },
  );
}

/**
 * Checks a group before any request: one to the most keys one transaction
 * takes (half as many with fencing: each key's counter step is an item
 * too), no key twice, and each key's item, and all of them together,
 * within DynamoDB's limits.
 */
export function validateGroup(ctx: AcquireSettings, keys: readonly LockKey[], options: Resolved<AcquireLocksOptions>, fenced: boolean): void {
  const most = maxGroupSize(fenced);
  if (keys.length === 0) throw new InvalidArgumentError('INVALID_GROUP', 'acquireLocks needs at least one key');
  if (keys.length > most) {
    throw new InvalidArgumentError(
      'INVALID_GROUP',
      `acquireLocks takes at most ${most} keys${fenced ? ' with fencing (each key also steps its counter in the transaction)' : ''}, got ${keys.length}`,
    );
  }
  const seen = new Set<string>();
  const items = keys.map((key) => {
    validateAcquireKey(ctx, key, options);
    const id = lockId(key);
    if (seen.has(id)) throw new InvalidArgumentError('INVALID_GROUP', `acquireLocks got the key ${describeLockKey(key)} twice`);
    seen.add(id);
    return lockItemOf(ctx, key, options);
  });
  validateGroupSize(items);
}
