/** The error of a semaphore whose clients disagree on its number of permits. */
import { DynamoDBLockError, guardByName } from '../base/errors.js';
import { describeLockKey, type LockKey } from '../base/lock-key.js';

/**
 * A permit of the semaphore is held by a client that counts another number
 * of permits (the `semaphorePermits` on its item), or the permit just past
 * this client's last is held: with clients that disagree, more holders than
 * this client's `permits` could run at once, so it takes none.
 */
export class SemaphorePermitsMismatchError extends DynamoDBLockError {
  override name = 'SemaphorePermitsMismatchError';
  /** The number of permits this client was asked to count. */
  readonly permits: number;
  /** The permit that showed the disagreement. */
  readonly permit: LockKey;
  /** The number of permits its item carries; `undefined` when it carries none (a permit past this client's last). */
  readonly permitsOnItem: number | undefined;
  constructor(permits: number, permit: LockKey, permitsOnItem: number | undefined) {
    const found =
      permitsOnItem === undefined
        ? 'is held, past the last of them'
        : `is held by a client that counts ${Number.isNaN(permitsOnItem) ? 'an unreadable number of' : permitsOnItem} permits`;
    super(`Semaphore of ${permits} permits: ${describeLockKey(permit)} ${found}; every client of a semaphore must count the same permits`);
    this.permits = permits;
    this.permit = permit;
    this.permitsOnItem = permitsOnItem;
  }
}

export const isSemaphorePermitsMismatchError = guardByName<SemaphorePermitsMismatchError>('SemaphorePermitsMismatchError');
