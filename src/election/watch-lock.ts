/**
 * Watching one lock by reading it again and again: who holds it, and each
 * new RVN its holder writes. Election observers and the CLI's `watch` use it.
 */
import { WATCH_DEFAULTS } from '../settings/defaults.js';
import { abortableSleep } from '../primitives/abortable-sleep.js';
import { isDynamoDBTimeoutError } from '../base/errors.js';
import { isTransient } from '../dynamodb/sdk-errors.js';
import { LockSnapshot, type Lock } from '../lock.js';
import type { LockClient } from '../lock-client.js';
import type { LockKeyOptions } from '../lock-client-options.js';
import { checkDuration } from '../settings/options.js';

export interface WatchLockOptions extends LockKeyOptions {
  /** Milliseconds between two reads. @default 1000 */
  readonly pollInterval?: number;
  /** Ends the iteration (without an error) when it aborts. */
  readonly signal?: AbortSignal;
}

/**
 * What `getLock` answered, as a snapshot that later heartbeats cannot change:
 * the watching client's own lock as of its last confirmed write.
 */
function snapshotOf(lock: Lock | LockSnapshot): LockSnapshot {
  if (lock instanceof LockSnapshot) return lock;
  const { partitionKey, sortKey, ownerName, recordVersionNumber, isReleased, data, additionalAttributes } = lock;
  return new LockSnapshot(
    { partitionKey, sortKey, ownerName, recordVersionNumber, leaseDurationMs: lock.leaseDuration, isReleased, data, additionalAttributes },
    lock.lookupTime,
  );
}

/** Same holder, same RVN: nothing happened between the two reads. */
function sameState(a: LockSnapshot | undefined, b: LockSnapshot | undefined): boolean {
  if (a === undefined || b === undefined) return a === b;
  return a.ownerName === b.ownerName && a.recordVersionNumber === b.recordVersionNumber;
}

/**
 * Yields the lock as it is now (`undefined` when nobody holds it: no item, or
 * a released one), then again each time a read shows a different holder or
 * RVN, until `signal` aborts. Reads are consistent `getLock` calls, one per
 * `pollInterval`; a change that is undone between two reads is not seen.
 * Throttling, 5xx answers, network errors and reads DynamoDB left unanswered
 * (`DynamoDBTimeoutError`) are retried at the next poll; other errors (a
 * missing table, a malformed item) end the iteration by throwing.
 */
export function watchLock(client: LockClient, partitionKey: string, options: WatchLockOptions = {}): AsyncIterable<LockSnapshot | undefined> {
  // Checked here, not in the generator, so that bad input fails at the call.
  const pollInterval = checkDuration('pollInterval', options.pollInterval ?? WATCH_DEFAULTS.pollInterval, { min: 1 });
  return poll(client, partitionKey, options, pollInterval);
}

async function* poll(
  client: LockClient,
  partitionKey: string,
  options: WatchLockOptions,
  pollInterval: number,
): AsyncGenerator<LockSnapshot | undefined, void, undefined> {
  const { signal, sortKey } = options;
  let seen = false;
  let last: LockSnapshot | undefined;
  while (!signal?.aborted) {
    try {
      const lock = await client.getLock(partitionKey, { sortKey, signal });
      const current = lock === undefined ? undefined : snapshotOf(lock);
      if (!seen || !sameState(last, current)) yield current;
      seen = true;
      last = current;
    } catch (error) {
      if (signal?.aborted) return;
      if (!isTransient(error) && !isDynamoDBTimeoutError(error)) throw error;
    }
    try {
      await abortableSleep(pollInterval, signal);
    } catch {
      return; // aborted: the caller asked the watch to end
    }
  }
}
