/** What a held lock (held-lock.ts) is in, and the writes that change it. */

/**
 * - `held`: acquired, and heartbeats keep it.
 * - `releasing`: a release is under way; heartbeats have stopped.
 * - `released`: released by this client.
 * - `lost`: taken by someone else, deleted, or lapsed; this client can no longer be sure it holds it.
 */
export type LockState = 'held' | 'releasing' | 'released' | 'lost';

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
