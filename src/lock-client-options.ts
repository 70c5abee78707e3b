/** The options of the client's calls that are the client's own (acquisitions take `AcquireLockOptions`). */

export interface LockKeyOptions {
  /** The sort key value; required exactly when the table has a sort key. */
  readonly sortKey?: string;
}

export interface GetLockOptions extends LockKeyOptions {
  /**
   * Also return an item marked released (as Java's `getLockFromDynamoDB`),
   * e.g. to read the data `release({ deleteLock: false, data })` left: a
   * `LockSnapshot` whose `isReleased` is true. @default false
   */
  readonly includeReleased?: boolean;
  readonly signal?: AbortSignal;
}

export interface ListLocksOptions {
  /** Read with strong consistency (Java lists eventually consistently). @default true */
  readonly consistentRead?: boolean;
  readonly signal?: AbortSignal;
}

export interface CloseOptions {
  /**
   * Milliseconds the releases of `close()` may take; locks still unreleased
   * then lapse after their lease. @default the client's `leaseDuration`, after
   * which they would have lapsed anyway
   */
  readonly timeout?: number;
}
