import { DynamoDBLockError, guardByName } from '../base/errors.js';
import { describeLockKey, type LockKey } from '../base/lock-key.js';

/**
 * A candidate campaigned while it was already campaigning or leading on the
 * same key. A client holding the lock would wait for its own heartbeats to
 * stop, which never happens, so the second campaign is refused instead.
 */
export class AlreadyCampaigningError extends DynamoDBLockError {
  override name = 'AlreadyCampaigningError';
  readonly partitionKey: string;
  readonly sortKey: string | undefined;
  constructor(key: LockKey, what: string) {
    super(`Cannot campaign in the election on ${describeLockKey(key)}: ${what}; resign or abort the campaign first`);
    this.partitionKey = key.partitionKey;
    this.sortKey = key.sortKey;
  }
}

export const isAlreadyCampaigningError = guardByName<AlreadyCampaigningError>('AlreadyCampaigningError');
