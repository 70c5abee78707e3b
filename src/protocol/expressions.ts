/**
 * Condition and update expressions, byte for byte as the Java client sends
 * them (PROTOCOL.md §3). Whitespace is part of the contract: note the
 * parentheses of `releasedConsistently` and the trailing space of
 * `heldByOwnerWithSortKey`.
 */

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
  releasedConsistentlyWithSortKey: 'attribute_exists(#pk) AND attribute_exists(#sk) AND #rvn = :rvn AND #ir = :ir',
  /** C7: take over a lock whose RVN stayed unchanged for its whole lease. */
  expired: 'attribute_exists(#pk) AND #rvn = :rvn',
  /** C8 */
  expiredWithSortKey: 'attribute_exists(#pk) AND attribute_exists(#sk) AND #rvn = :rvn',
  /** C10: heartbeat or release by the holder. */
  heldByOwner: 'attribute_exists(#pk) AND #rvn = :rvn AND #on = :on',
  /** C9 (the trailing space is Java's). */
  heldByOwnerWithSortKey: 'attribute_exists(#pk) AND attribute_exists(#sk) AND #rvn = :rvn AND #on = :on ',
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
  /** Our mark-released (PROTOCOL.md §9.2 item 2): a new RVN, so no late heartbeat or second release can match. */
  markReleasedWithNewRvn: 'SET #ir = :ir, #rvn = :newRvn',
  markReleasedWithDataAndNewRvn: 'SET #ir = :ir, #d = :d, #rvn = :newRvn',
  /** Our adoption of a handed-off lock (hand-off.ts): a heartbeat's U3 that also writes the adopter's owner name. */
  adopt: 'SET #ld = :ld, #rvn = :newRvn, #on = :newOn',
  /** Appended to a heartbeat's SET list by a client with the bounded-clock option (clock-stamp.ts). */
  clockStamp: ', #wa = :wa',
});

export interface HolderConditionOptions {
  readonly sortKey: boolean;
  /** Refuse an item marked released (PROTOCOL.md §9.2 item 3), so a late heartbeat cannot revive it. */
  readonly refuseReleased: boolean;
  /** How many RVNs of the holder's own writes with unknown outcome to accept besides `:rvn`. */
  readonly uncertainRvnCount: number;
}

/** Built once per combination (up to this many uncertain RVNs): every heartbeat and release asks for one. */
const MEMOIZED_UNCERTAIN_RVNS = 8;
const holderConditions: string[] = [];

/**
 * The condition of a holder's heartbeat or release. Without our two
 * extensions it is Java's C10/C9, byte for byte; with them it stays at least
 * as strict for every other client: only RVNs this holder wrote, under its
 * own owner name, ever match.
 */
export function holderCondition(options: HolderConditionOptions): string {
  const count = options.uncertainRvnCount;
  if (!Number.isInteger(count) || count < 0 || count > MEMOIZED_UNCERTAIN_RVNS) return composeHolderCondition(options);
  const index = (count * 2 + (options.refuseReleased ? 1 : 0)) * 2 + (options.sortKey ? 1 : 0);
  return (holderConditions[index] ??= composeHolderCondition(options));
}

/** The value placeholder of the holder's `i`th write whose reply was lost (our extension): `:uncertainRvn0`, `:uncertainRvn1`, … */
export function uncertainRvnPlaceholder(i: number): string {
  return `:uncertainRvn${i}`;
}

function composeHolderCondition(options: HolderConditionOptions): string {
  if (!options.refuseReleased && options.uncertainRvnCount === 0) {
    return options.sortKey ? Condition.heldByOwnerWithSortKey : Condition.heldByOwner;
  }
  const terms = ['attribute_exists(#pk)'];
  if (options.sortKey) terms.push('attribute_exists(#sk)');
  if (options.uncertainRvnCount === 0) {
    terms.push('#rvn = :rvn');
  } else {
    const alternatives = ['#rvn = :rvn'];
    for (let i = 0; i < options.uncertainRvnCount; i++) alternatives.push(`#rvn = ${uncertainRvnPlaceholder(i)}`);
    terms.push(`(${alternatives.join(' OR ')})`);
  }
  terms.push('#on = :on');
  if (options.refuseReleased) terms.push('attribute_not_exists(#ir)');
  return terms.join(' AND ');
}

/** U6: `SET #k0=:v0,#k1=:v1,…`, the generated SET list of UpdateItem acquisitions. */
export function setListExpression(entryCount: number): string {
  const assignments: string[] = [];
  for (let i = 0; i < entryCount; i++) assignments.push(`#k${i}=:v${i}`);
  return `SET ${assignments.join(',')}`;
}
