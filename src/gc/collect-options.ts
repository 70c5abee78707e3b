/** The options of `collectAbandoned`, their checks, and the report it returns. */
import type { MalformedLockItemError } from '../base/errors.js';
import { InvalidArgumentError } from '../base/errors.js';
import type { LockKey } from '../base/lock-key.js';
import type { LockItem, LockRecord } from '../protocol/index.js';
import { checkSignal } from '../settings/argument-checks.js';
import { COLLECT_DEFAULTS } from '../settings/defaults.js';
import { checkCount, checkDuration, checkFlag } from '../settings/options.js';

export interface CollectAbandonedOptions {
  /**
   * The longest the pass lasts, in ms. An item whose lease, counted from
   * when the pass first saw it, would not end within it is left
   * (`lease-outlasts-pass`); deletes not sent by then are left (`pass-ended`).
   * @default 600 000 (10 minutes)
   */
  readonly maxDuration?: number;
  /** Items with a longer lease (ms) are left unwatched (`lease-over-cap`). @default Infinity */
  readonly maxLease?: number;
  /** Only the items whose partition key starts with this. @default every item */
  readonly partitionKeyPrefix?: string;
  /** Watch as usual, delete nothing: the items that would be deleted are left as `dry-run`. @default false */
  readonly dryRun?: boolean;
  /** Deletes in flight at once; one at a time while this client's own heartbeats are behind. @default 8 */
  readonly concurrency?: number;
  /** Ends the pass: it rejects with the signal's reason (a delete cut off is conditioned like any other, so it is safe either way). */
  readonly signal?: AbortSignal;
}

export type ResolvedCollectOptions = Required<Omit<CollectAbandonedOptions, 'partitionKeyPrefix' | 'signal'>> &
  Pick<CollectAbandonedOptions, 'partitionKeyPrefix' | 'signal'>;

export function resolveCollectOptions(options: CollectAbandonedOptions): ResolvedCollectOptions {
  const prefix = options.partitionKeyPrefix;
  if (prefix !== undefined && (typeof prefix !== 'string' || prefix === '')) {
    throw new InvalidArgumentError('INVALID_OPTION', `partitionKeyPrefix must be a non-empty string, got ${JSON.stringify(prefix)}`);
  }
  return {
    maxDuration: checkDuration('maxDuration', options.maxDuration ?? COLLECT_DEFAULTS.maxDuration, { min: 1, allowInfinity: true }),
    maxLease: checkDuration('maxLease', options.maxLease ?? COLLECT_DEFAULTS.maxLease, { allowInfinity: true }),
    partitionKeyPrefix: prefix,
    dryRun: checkFlag('dryRun', options.dryRun ?? false),
    concurrency: checkCount('concurrency', options.concurrency ?? COLLECT_DEFAULTS.concurrency),
    signal: checkSignal('signal', options.signal),
  };
}

/** A lock item as the pass saw it. */
export type SeenLock = Pick<LockRecord, keyof LockKey | 'ownerName' | 'recordVersionNumber' | 'leaseDurationMs' | 'isReleased'>;

/** Why an item was not deleted. */
export type LeftReason =
  /** This client holds it, or is acquiring it. */
  | 'held-here'
  /** Its RVN or owner changed while it was watched: its holder is alive (a heartbeat), or another client took it. */
  | 'moved'
  /** The delete was refused: the RVN moved between the last look and the delete (a heartbeat, or someone took it). */
  | 'taken'
  /** It went away before the delete: its holder released it, or another pass collected it. */
  | 'gone'
  /** Its lease is longer than `maxLease`: not watched. */
  | 'lease-over-cap'
  /** Its lease, counted from when it was seen, would not end within `maxDuration`: not watched. */
  | 'lease-outlasts-pass'
  /** `maxDuration` passed before its delete was sent. */
  | 'pass-ended'
  /** `dryRun`: it would have been deleted. */
  | 'dry-run';

export type LeftItem =
  | { readonly reason: LeftReason; readonly lock: SeenLock }
  /** The delete failed, or its outcome is unknown (no answer): conditioned on the RVN, it removed at most an abandoned item. */
  | { readonly reason: 'error'; readonly lock: SeenLock; readonly error: unknown }
  /** Not a lock item (MalformedLockItemError): no client can acquire it, and nothing here judges it. */
  | { readonly reason: 'malformed'; readonly item: LockItem; readonly error: MalformedLockItemError };

export interface AbandonedItemsReport {
  /**
   * Deleted: their RVN stood still for their lease. Counted here too: a delete
   * whose first attempt got no answer and whose SDK retry found the item gone.
   */
  readonly deleted: readonly SeenLock[];
  readonly left: readonly LeftItem[];
  /** False when `maxDuration` ended the pass before it had read every item once: those not read are in neither list. */
  readonly complete: boolean;
  /** How long the pass took, in ms. */
  readonly durationMs: number;
}
