/**
 * How a semaphore's rounds read its permits: every permit, and the one past
 * the last, in one BatchGetItem (a call per 100 keys); once IAM refuses
 * `dynamodb:BatchGetItem` to this client, one GetItem each from then on,
 * after one warning, as the locking policy alone allows.
 */
import type { Acquirer } from '../acquire/acquirer.js';
import type { LockKey } from '../base/lock-key.js';
import type { Logger } from '../base/logger.js';
import type { LockObservation } from '../dynamodb/read-lock.js';
import { isAccessDenied } from '../dynamodb/sdk-errors.js';

export class PermitReads {
  readonly #acquirer: Pick<Acquirer, 'readLock' | 'readLocks'>;
  readonly #logger: Logger | undefined;
  #batched = true;

  constructor(acquirer: Pick<Acquirer, 'readLock' | 'readLocks'>, logger: Logger | undefined) {
    this.#acquirer = acquirer;
    this.#logger = logger;
  }

  async read(keys: readonly LockKey[], signal: AbortSignal): Promise<(LockObservation | undefined)[]> {
    if (this.#batched) {
      try {
        return await this.#acquirer.readLocks(keys, signal);
      } catch (error) {
        if (!isAccessDenied(error)) throw error;
        this.#batched = false;
        this.#logger?.warn({ err: error }, 'semaphore: BatchGetItem refused; reading each permit with GetItem from now on');
      }
    }
    return Promise.all(keys.map((key) => this.#acquirer.readLock(key, signal)));
  }
}
