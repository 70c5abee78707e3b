/**
 * What a pass of `collectAbandoned` makes of what it reads, as pure
 * functions: the first look at an item (watch it, or leave it and why), the
 * instant its RVN has stood still for its lease, the second look (is it still
 * as first seen), and what a refused or failed delete means.
 *
 * The rule is a Java waiter's (PROTOCOL.md §5.4): an RVN seen unchanged for
 * strictly longer than its lease, on this client's monotonic clock from the
 * reply that first showed it, belongs to a holder that stopped. The delete is
 * conditioned on that RVN and owner (Java's release condition), so it is a
 * takeover followed by a release, and a holder that wrote a new RVN since is
 * never touched.
 */
import { TAKEOVER_MARGIN_MS } from '../acquire/stale-watch.js';
import { isMalformedLockItemError } from '../base/errors.js';
import { isConditionalCheckFailed } from '../dynamodb/sdk-errors.js';
import { classifyFailedWrite } from '../dynamodb/write-outcome.js';
import { decodeLockItem, type KeySchemaNames, type LockItem } from '../protocol/index.js';
import type { LeftItem, SeenLock } from './collect-options.js';

/** An item being watched: as first seen, and when the reply that showed it arrived. */
export interface Watched {
  readonly lock: SeenLock;
  readonly observedAt: number;
}

export interface FirstLookRules {
  /** True for an item this client holds or is acquiring: never deleted. */
  readonly isHeldHere: (lock: SeenLock) => boolean;
  /** Leases longer than this are not watched. */
  readonly maxLeaseMs: number;
}

export type FirstLook = { readonly watch: Watched } | { readonly left: LeftItem };

export function firstLook(schema: KeySchemaNames, item: LockItem, observedAt: number, rules: FirstLookRules): FirstLook {
  let lock: SeenLock;
  try {
    lock = seenLock(schema, item);
  } catch (error) {
    if (!isMalformedLockItemError(error)) throw error;
    return { left: { reason: 'malformed', item, error } };
  }
  if (rules.isHeldHere(lock)) return { left: { reason: 'held-here', lock } };
  if (lock.leaseDurationMs > rules.maxLeaseMs) return { left: { reason: 'lease-over-cap', lock } };
  return { watch: { lock, observedAt } };
}

/** The instant from which the watched RVN has stood still for strictly longer than its lease: a Java waiter's takeover instant. */
export function standStillAt(watched: Watched): number {
  return watched.observedAt + watched.lock.leaseDurationMs + TAKEOVER_MARGIN_MS;
}

/** Whether `item`, read again, is still the one watched (same RVN and owner); released or not makes no difference. */
export function isUnchanged(schema: KeySchemaNames, watched: Watched, item: LockItem): boolean {
  let now: SeenLock;
  try {
    now = seenLock(schema, item);
  } catch (error) {
    if (isMalformedLockItemError(error)) return false;
    throw error;
  }
  return now.recordVersionNumber === watched.lock.recordVersionNumber && now.ownerName === watched.lock.ownerName;
}

/**
 * What a delete that did not succeed means:
 * - `deleted`: an SDK retry found the item gone: the first attempt, whose
 *   reply was lost, may have deleted it; either way it is gone;
 * - `gone`: the only attempt found it gone (released, or collected by another pass);
 * - `taken`: the item is there with another RVN or owner (a heartbeat, a takeover);
 * - `failed`: no definite answer, or DynamoDB refused the request itself.
 */
export function judgeFailedDelete(error: unknown): 'deleted' | 'gone' | 'taken' | 'failed' {
  // The delete writes no RVN of its own: no failed condition is ever our own write.
  const failed = classifyFailedWrite(error, { ownerName: '', recordVersionNumbers: [] });
  if (failed.outcome === 'refused') return failed.item === undefined ? 'gone' : 'taken';
  if (failed.outcome === 'unknown' && isConditionalCheckFailed(error)) return 'deleted';
  return 'failed';
}

function seenLock(schema: KeySchemaNames, item: LockItem): SeenLock {
  const { partitionKey, sortKey, ownerName, recordVersionNumber, leaseDurationMs, isReleased } = decodeLockItem(schema, item);
  return { partitionKey, sortKey, ownerName, recordVersionNumber, leaseDurationMs, isReleased };
}
