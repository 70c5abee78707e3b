/**
 * The client's private, mutable record of a lock it holds. Users see it only
 * through the read-only {@link Lock} handle.
 */
import type { ScheduledTask } from './heartbeat/scheduler.js';
import type { LockItem, LockKey } from './protocol/index.js';

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
  fired: boolean;
}

/** A collision-free in-process identity for (partition key, sort key). */
export function lockId(key: LockKey): string {
  const sk = key.sortKey === undefined ? '-' : `${key.sortKey.length}:${key.sortKey}`;
  return `${key.partitionKey.length}:${key.partitionKey}|${sk}`;
}

export class HeldLock {
  readonly id: string;
  readonly partitionKey: string;
  readonly sortKey: string | undefined;
  readonly ownerName: string;
  readonly deleteLockOnRelease: boolean;
  /** As written to the table; decoded afresh for each reader. */
  readonly additionalAttributes: LockItem;
  recordVersionNumber: string;
  /** RVNs of this client's writes whose replies were lost: the table may hold any of them. */
  uncertainRecordVersionNumbers: string[] = [];
  leaseDurationMs: number;
  /** Monotonic time just before the last confirmed write was sent. */
  lookupTime: number;
  data: Uint8Array | undefined;
  state: LockState = 'held';
  sessionMonitor: SessionMonitor | undefined;
  heartbeatTask: ScheduledTask | undefined;
  monitorTask: ScheduledTask | undefined;
  #tail: Promise<unknown> = Promise.resolve();

  constructor(fields: {
    key: LockKey;
    ownerName: string;
    recordVersionNumber: string;
    leaseDurationMs: number;
    lookupTime: number;
    data: Uint8Array | undefined;
    additionalAttributes: LockItem;
    deleteLockOnRelease: boolean;
  }) {
    this.id = lockId(fields.key);
    this.partitionKey = fields.key.partitionKey;
    this.sortKey = fields.key.sortKey;
    this.ownerName = fields.ownerName;
    this.recordVersionNumber = fields.recordVersionNumber;
    this.leaseDurationMs = fields.leaseDurationMs;
    this.lookupTime = fields.lookupTime;
    this.data = fields.data;
    this.additionalAttributes = fields.additionalAttributes;
    this.deleteLockOnRelease = fields.deleteLockOnRelease;
  }

  /** Lease ran out on this client's clock, or the lock is no longer held. */
  isExpired(now: number): boolean {
    return this.state !== 'held' || now - this.lookupTime > this.leaseDurationMs;
  }

  /**
   * Runs writes of this lock one at a time (heartbeat, release), so each
   * conditions on the RVN the previous one wrote.
   */
  exclusive<T>(work: () => Promise<T>): Promise<T> {
    const result = this.#tail.then(work);
    this.#tail = result.catch(() => undefined);
    return result;
  }
}
