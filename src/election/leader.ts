/** Who leads an election, as read from the election's lock item. */
import type { LockView } from './watch-lock.js';

/** The leader of an election: the holder of its lock, whoever wrote it (this library or a Java client). */
export interface Leader {
  /** The leader's owner name: its lock client's `ownerName`. */
  readonly ownerName: string;
  /** What the leader stored with its lock, e.g. JSON with its address. */
  readonly data: Uint8Array | undefined;
  /** The RVN of the leader's latest write seen; it changes with every heartbeat. */
  readonly recordVersionNumber: string;
  /** The leader's lease in milliseconds. */
  readonly leaseDuration: number;
}

export function leaderOf(view: LockView): Leader {
  return {
    ownerName: view.ownerName,
    data: view.data,
    recordVersionNumber: view.recordVersionNumber,
    leaseDuration: view.leaseDuration,
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
