/**
 * Watches one lock until its record version number has stood still for the
 * holder's whole lease on this machine's monotonic clock: the rule by which a
 * Java waiter, and this library's, takes a lock over (PROTOCOL.md §5.4). A
 * holder that is alive writes a new RVN with every heartbeat, well within its
 * lease, so a lock that passes this watch has a holder that stopped.
 */
import type { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { abortableSleep } from '../primitives/abortable-sleep.js';
import { StaleWatch } from '../acquire/stale-watch.js';
import { systemClock } from '../base/clock.js';
import type { LockKey } from '../base/lock-key.js';
import type { LockRecord, LockTable } from '../protocol/index.js';
import { readLock, type LockObservation } from '../dynamodb/read-lock.js';

/** The watch reads the lock this often at most, to stop as soon as the holder shows it is alive. */
const READ_INTERVAL_MS = 1_000;
/** Reads per lease when the lease is short. */
const READS_PER_LEASE = 4;

export type StandStillOutcome =
  /** The RVN first seen stood still for longer than its lease. */
  | { readonly kind: 'stood-still' }
  /** The lock moved on: a new RVN or holder (`current`), or nobody holds it any more. */
  | { readonly kind: 'moved'; readonly current: LockRecord | undefined };

export async function watchUntilStandStill(
  dynamoDB: Pick<DynamoDBClient, 'send'>,
  table: LockTable,
  first: LockObservation,
  signal?: AbortSignal,
): Promise<StandStillOutcome> {
  const watch = new StaleWatch();
  watch.observe(first);
  const key: LockKey = { partitionKey: first.record.partitionKey, sortKey: first.record.sortKey };
  const readEvery = Math.min(READ_INTERVAL_MS, first.record.leaseDurationMs / READS_PER_LEASE);
  for (;;) {
    const now = systemClock.now();
    // The delete that follows is conditioned on this RVN: at the takeover instant no read is needed first.
    if (now >= watch.takeoverAt()) return { kind: 'stood-still' };
    await abortableSleep(Math.min(readEvery, watch.takeoverAt() - now), signal);
    if (systemClock.now() >= watch.takeoverAt()) return { kind: 'stood-still' };
    const observation = await readLock(dynamoDB, table, key, systemClock, signal);
    if (!isSameHolding(first, observation))
      return { kind: 'moved', current: observation?.record.isReleased === false ? observation.record : undefined };
  }
}

function isSameHolding(first: LockObservation, observation: LockObservation | undefined): boolean {
  const record = observation?.record;
  return (
    record !== undefined &&
    !record.isReleased &&
    record.ownerName === first.record.ownerName &&
    record.recordVersionNumber === first.record.recordVersionNumber
  );
}
