/** What a held lock (held-lock.ts) is made of and is in, the writes that change it, and the write that won it. */
import type { MonotonicClock } from '../base/clock.js';
import type { LockKey } from '../base/lock-key.js';
import type { LockItem, LockRecordToWrite } from '../protocol/index.js';
import type { LeaseEnd } from './lease-end.js';

/**
 * - `held`: acquired, and heartbeats keep it.
 * - `releasing`: a release is under way; heartbeats have stopped.
 * - `released`: released by this client.
 * - `lost`: taken by someone else, deleted, or lapsed; this client can no longer be sure it holds it.
 * - `handingOff`: a hand-off is under way; heartbeats have stopped, writes under way are waited for.
 * - `handedOff`: handed off by this client, for another client to adopt.
 */
export type LockState = 'held' | 'releasing' | 'released' | 'lost' | 'handingOff' | 'handedOff';

export interface SessionMonitor {
  /** Milliseconds after the last confirmed heartbeat at which the lock enters its danger zone. */
  readonly safeTimeWithoutHeartbeat: number;
  readonly callback: (() => void) | undefined;
}

/** A write of the lock sent by this client: its RVN, and the lease counted from when it left. */
export interface LockWrite {
  readonly recordVersionNumber: string;
  readonly leaseDurationMs: number;
  /** Monotonic time just before it was sent. */
  readonly sentAt: number;
  readonly sentAtWall: number | undefined;
  /** Data it sets; none to keep the data. */
  readonly data?: Uint8Array | undefined;
  readonly deleteData?: boolean | undefined;
}

/** The write that won a lock, as the acquisition hands it over to be held. */
export interface WonWrite {
  readonly record: LockRecordToWrite;
  /** Monotonic time when the write first left this client: the lease counts from here. */
  readonly lookupTime: number;
  /** Wall-clock time at `lookupTime`, where the clock has one. */
  readonly lookupWallTime: number | undefined;
  /** The record's additional attributes as written. */
  readonly additionalAttributes: LockItem;
  /** With fencing: the token the write got. */
  readonly fencingToken?: bigint | undefined;
  /** A renewal of this write whose outcome is unknown: the table may hold its RVN instead. */
  readonly inDoubt?: WonWrite | undefined;
}

/** How the caller asked to hold a lock it acquired. */
export interface HoldTerms {
  readonly deleteLockOnRelease: boolean;
  readonly sessionMonitor?: { readonly safeTimeWithoutHeartbeat: number; readonly callback?: (() => void) | undefined } | undefined;
  /** The end of the process that holds it (acquisition option `invocationDeadline`). */
  readonly leaseEnd?: LeaseEnd | undefined;
}

/**
 * What a held lock is made of: its key, the write that won it, its holder's
 * terms, and the client's parts it uses. `Held`: the lock, which `onEnd` is
 * told of.
 */
export interface HeldLockFields<Held> {
  key: LockKey;
  ownerName: string;
  recordVersionNumber: string;
  leaseDurationMs: number;
  lookupTime: number;
  lookupWallTime: number | undefined;
  data: Uint8Array | undefined;
  additionalAttributes: LockItem;
  deleteLockOnRelease: boolean;
  clock: MonotonicClock;
  marginFor: (leaseDurationMs: number) => number;
  onEnd?: ((held: Held, announce: boolean) => void) | undefined;
  sessionMonitor?: SessionMonitor | undefined;
  fencingToken?: bigint | undefined;
  leaseEnd?: LeaseEnd | undefined;
}
