/** Who leads an election, as read from the election's lock item. */
import type { LockSnapshot } from '../lock.js';

/**
 * The leader of an election: the holder of its lock, whoever wrote it (this
 * library or a Java client), as a snapshot of the lock shows it: its
 * `ownerName` (its lock client's), the `data` it stored with the lock (e.g.
 * JSON with its address) and, when that is UTF-8, its `dataText`, the
 * `recordVersionNumber` of its latest write seen (it changes with every
 * heartbeat) and its `leaseDuration` in milliseconds.
 */
export type Leader = Pick<LockSnapshot, 'ownerName' | 'data' | 'dataText' | 'recordVersionNumber' | 'leaseDuration'>;

export function leaderOf(lock: Leader): Leader {
  return {
    ownerName: lock.ownerName,
    data: lock.data,
    dataText: lock.dataText,
    recordVersionNumber: lock.recordVersionNumber,
    leaseDuration: lock.leaseDuration,
  };
}

function sameBytes(a: Uint8Array | undefined, b: Uint8Array | undefined): boolean {
  if (a === undefined || b === undefined) return a === b;
  return a.length === b.length && a.every((byte, i) => byte === b[i]);
}

/**
 * The same leader with the same data. Heartbeats change only the RVN, so
 * they are not a change of leadership.
 */
export function sameLeader(a: Leader | undefined, b: Leader | undefined): boolean {
  if (a === undefined || b === undefined) return a === b;
  return a.ownerName === b.ownerName && sameBytes(a.data, b.data);
}
