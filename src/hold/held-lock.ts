/**
 * The client's private, mutable record of a lock it holds. Users see it only
 * through the read-only {@link Lock} handle.
 */
import type { MonotonicClock } from '../clock.js';
import type { LockLostError } from '../errors.js';
import type { ScheduledTask } from '../heartbeat/scheduler.js';
import type { Lock } from '../lock.js';
import type { LockItem, LockKey } from '../protocol/index.js';

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

const MAX_UNCERTAIN_RVNS = 8;

/** The next write waits for the previous one to settle, whatever its outcome (its caller sees that). */
const ignore = (): void => undefined;
/** Where the first write of an idle lock waits: it still starts on a later tick, as it would behind another write. */
const IDLE: Promise<unknown> = Promise.resolve();
/** Most locks have no additional attributes; they share one empty item rather than each keeping its own. */
const NO_ADDITIONAL_ATTRIBUTES: LockItem = Object.freeze({});

export class HeldLock {
  readonly id: string;
  readonly partitionKey: string;
  readonly sortKey: string | undefined;
  readonly ownerName: string;
  readonly deleteLockOnRelease: boolean;
  /** The fencing token of the acquisition, when the client fences (`fencingTableName`). */
  readonly fencingToken: bigint | undefined;
  /** As written to the table; decoded afresh for each reader. */
  readonly additionalAttributes: LockItem;
  recordVersionNumber: string;
  /** The user's handle on this lock, once made. */
  handle: Lock | undefined;
  /** Stops waiting for the heartbeat in flight, if any (a release must not wait behind a stuck one). */
  abortHeartbeat: (() => void) | undefined;
  leaseDurationMs: number;
  /** Monotonic time just before the last confirmed write was sent. */
  lookupTime: number;
  /** Wall-clock time (`Date.now()`) at `lookupTime`, where the clock has one. */
  lookupWallTime: number | undefined;
  data: Uint8Array | undefined;
  state: LockState = 'held';
  sessionMonitor: SessionMonitor | undefined;
  /** Milliseconds before a lease runs out at which the lock is given up: it follows the lease in force. */
  readonly #marginFor: (leaseDurationMs: number) => number;
  heartbeatTask: ScheduledTask<HeldLock> | undefined;
  expiryTask: ScheduledTask<HeldLock> | undefined;
  monitorTask: ScheduledTask<HeldLock> | undefined;
  /** Its batched heartbeat failed: the next one goes alone, with the single heartbeat's retries. */
  retriesAlone = false;
  /** Made when the signal is first asked for: many locks never are, and Node's signals are not small. */
  #loss: AbortController | undefined;
  #endReason: LockLostError | undefined;
  /** RVNs of this client's writes whose outcome is unknown; none (and no array) in the usual case. */
  #uncertain: string[] | undefined;
  /** The earliest safe time any of those writes allows, had it been applied; Infinity when there are none. */
  #uncertainSafeUntil = Infinity;
  /** The last write queued, while any is; none when the lock is idle. */
  #tail: Promise<unknown> | undefined;
  #writes = 0;

  constructor(fields: {
    key: LockKey;
    ownerName: string;
    recordVersionNumber: string;
    leaseDurationMs: number;
    lookupTime: number;
    lookupWallTime: number | undefined;
    data: Uint8Array | undefined;
    additionalAttributes: LockItem;
    deleteLockOnRelease: boolean;
    marginFor: (leaseDurationMs: number) => number;
    fencingToken?: bigint | undefined;
  }) {
    this.id = lockId(fields.key);
    this.partitionKey = fields.key.partitionKey;
    this.sortKey = fields.key.sortKey;
    this.ownerName = fields.ownerName;
    this.recordVersionNumber = fields.recordVersionNumber;
    this.leaseDurationMs = fields.leaseDurationMs;
    this.lookupTime = fields.lookupTime;
    this.lookupWallTime = fields.lookupWallTime;
    this.data = fields.data;
    this.additionalAttributes = Object.keys(fields.additionalAttributes).length === 0 ? NO_ADDITIONAL_ATTRIBUTES : fields.additionalAttributes;
    this.deleteLockOnRelease = fields.deleteLockOnRelease;
    this.fencingToken = fields.fencingToken;
    this.#marginFor = fields.marginFor;
  }

  /** The safety margin of the lease in force. */
  get safetyMarginMs(): number {
    return this.#marginFor(this.leaseDurationMs);
  }

  /** Aborts, with a {@link LockLostError}, once the lock ends for any reason. */
  get signal(): AbortSignal {
    if (this.#loss === undefined) {
      this.#loss = new AbortController();
      if (this.#endReason !== undefined) this.#loss.abort(this.#endReason);
    }
    return this.#loss.signal;
  }

  /** Why the lock ended, once it has. */
  get endReason(): LockLostError | undefined {
    return this.#endReason;
  }

  /**
   * Monotonic time until which the lock is safe to act on without a newer
   * confirmed write: the earliest that the last confirmed write, or any
   * later write whose outcome is unknown, allows (each by its own send time
   * and lease, less the margin of that lease).
   */
  safeUntil(): number {
    return Math.min(this.lookupTime + this.leaseDurationMs - this.safetyMarginMs, this.#uncertainSafeUntil);
  }

  /**
   * Milliseconds of safe time left. Time counts on the monotonic clock, but
   * also on the wall clock since the last confirmed write where the clock
   * has one: the monotonic clock stands still while the host is suspended,
   * and the lease runs on meanwhile. Either can only shorten what is left.
   */
  safeTimeLeft(clock: MonotonicClock): number {
    let now = clock.now();
    if (clock.wallNow !== undefined && this.lookupWallTime !== undefined) {
      now = Math.max(now, this.lookupTime + (clock.wallNow() - this.lookupWallTime));
    }
    return this.safeUntil() - now;
  }

  /** Moves the lock to its final state and aborts its signal; only the first call counts. */
  end(state: 'released' | 'lost', reason: LockLostError): boolean {
    if (this.state === 'released' || this.state === 'lost') return false;
    this.state = state;
    this.#endReason = reason;
    this.#loss?.abort(reason);
    return true;
  }

  /** RVNs of this client's writes whose replies were lost: the table may hold any of them. */
  get uncertainRecordVersionNumbers(): readonly string[] | undefined {
    return this.#uncertain;
  }

  /**
   * Remembers a write whose outcome is unknown: its RVN, which the table may
   * now hold, and the safe time it allows (shorter than the lock's if it
   * shortened the lease). Only the newest few RVNs are kept: conditions have
   * an operator limit, and dropping an old one can at worst give up a lock
   * this client still holds (it then lapses), never let two clients hold it.
   * The safe time of a dropped one still counts.
   *
   * Only a write that shortened the lease can end the safe time sooner: one
   * sent later with the same or a longer lease would end it later. (That
   * also leaves Java's `holdLockOnServiceUnavailable` its meaning.)
   */
  rememberUncertain(write: { recordVersionNumber: string; sentAt: number; leaseDurationMs: number }): void {
    const uncertain = (this.#uncertain ??= []);
    uncertain.push(write.recordVersionNumber);
    if (uncertain.length > MAX_UNCERTAIN_RVNS) uncertain.shift();
    if (write.leaseDurationMs < this.leaseDurationMs) {
      const safeUntil = write.sentAt + write.leaseDurationMs - this.#marginFor(write.leaseDurationMs);
      this.#uncertainSafeUntil = Math.min(this.#uncertainSafeUntil, safeUntil);
    }
  }

  /**
   * A write was confirmed, sent at `sentAt` (wall-clock `sentAtWall`): the
   * table holds its RVN, so none of the uncertain ones.
   */
  confirmWrite(write: { recordVersionNumber: string; sentAt: number; sentAtWall: number | undefined; leaseDurationMs: number }): void {
    this.recordVersionNumber = write.recordVersionNumber;
    this.lookupTime = write.sentAt;
    this.lookupWallTime = write.sentAtWall;
    this.leaseDurationMs = write.leaseDurationMs;
    this.#uncertain = undefined;
    this.#uncertainSafeUntil = Infinity;
  }

  /** Lease ran out on this client's clock, or the lock is no longer held. */
  isExpired(now: number): boolean {
    return this.state !== 'held' || now - this.lookupTime > this.leaseDurationMs;
  }

  /** A write of this lock is under way or waiting for its turn. */
  get writing(): boolean {
    return this.#writes > 0;
  }

  /**
   * Runs writes of this lock one at a time (heartbeat, release), so each
   * conditions on the RVN the previous one wrote.
   */
  exclusive<T>(work: () => Promise<T>): Promise<T> {
    this.#writes++;
    const result = (this.#tail ?? IDLE).then(async () => {
      try {
        return await work();
      } finally {
        // The work has updated the lock (RVN, lease) before this point, so a write queued from
        // now on may start at once; an idle lock keeps no promise.
        if (--this.#writes === 0) this.#tail = undefined;
      }
    });
    this.#tail = result.catch(ignore);
    return result;
  }
}
