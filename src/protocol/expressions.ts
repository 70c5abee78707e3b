/**
 * Condition and update expressions, byte for byte as the Java client sends
 * them (PROTOCOL.md §3). Whitespace is part of the contract: note the
 * parentheses of `releasedConsistently` and the trailing space of
 * `heldByOwnerWithSortKey`.
 */

export const Placeholder = Object.freeze({
  partitionKey: '#pk',
  sortKey: '#sk',
  recordVersionNumber: '#rvn',
  ownerName: '#on',
  leaseDuration: '#ld',
  data: '#d',
  isReleased: '#ir',
});

export const ValuePlaceholder = Object.freeze({
  partitionKey: ':pk',
  recordVersionNumber: ':rvn',
  newRecordVersionNumber: ':newRvn',
  ownerName: ':on',
  leaseDuration: ':ld',
  data: ':d',
  isReleased: ':ir',
});

export const Condition = Object.freeze({
  /** C1: create a lock only where no item exists. */
  absent: 'attribute_not_exists(#pk)',
  /** C2 */
  absentWithSortKey: 'attribute_not_exists(#pk) AND attribute_not_exists(#sk)',
  /** C3: take a lock its holder marked released. */
  released: 'attribute_exists(#pk) AND #ir = :ir',
  /** C4 */
  releasedWithSortKey: 'attribute_exists(#pk) AND attribute_exists(#sk) AND #ir = :ir',
  /** C5: take a released lock only if nobody took it since it was read. */
  releasedConsistently: '(attribute_exists(#pk) AND #rvn = :rvn AND #ir = :ir)',
  /** C6 */
  releasedConsistentlyWithSortKey:
    'attribute_exists(#pk) AND attribute_exists(#sk) AND #rvn = :rvn AND #ir = :ir',
  /** C7: take over a lock whose RVN stayed unchanged for its whole lease. */
  expired: 'attribute_exists(#pk) AND #rvn = :rvn',
  /** C8 */
  expiredWithSortKey: 'attribute_exists(#pk) AND attribute_exists(#sk) AND #rvn = :rvn',
  /** C10: heartbeat or release by the holder. */
  heldByOwner: 'attribute_exists(#pk) AND #rvn = :rvn AND #on = :on',
  /** C9 (the trailing space is Java's). */
  heldByOwnerWithSortKey:
    'attribute_exists(#pk) AND attribute_exists(#sk) AND #rvn = :rvn AND #on = :on ',
});

/** K1: all locks sharing one partition key. */
export const PARTITION_KEY_CONDITION = '#pk = :pk';

export const Update = Object.freeze({
  /** U1 */
  markReleased: 'SET #ir = :ir',
  /** U2 */
  markReleasedWithData: 'SET #ir = :ir, #d = :d',
  /** U3 */
  heartbeat: 'SET #ld = :ld, #rvn = :newRvn',
  /** U4 */
  heartbeatDeletingData: 'SET #ld = :ld, #rvn = :newRvn REMOVE #d',
  /** U5 */
  heartbeatReplacingData: 'SET #ld = :ld, #rvn = :newRvn, #d = :d',
  /** U7: appended to U6 by UpdateItem takeovers of released or expired locks. */
  removeIsReleasedSuffix: ' REMOVE #ir ',
});

/** U6: `SET #k0=:v0,#k1=:v1,…`, the generated SET list of UpdateItem acquisitions. */
export function setListExpression(entryCount: number): string {
  const assignments: string[] = [];
  for (let i = 0; i < entryCount; i++) assignments.push(`#k${i}=:v${i}`);
  return `SET ${assignments.join(',')}`;
}
