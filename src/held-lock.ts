/**
 * The client's private, mutable record of a lock it holds. Users see it only
 * through the read-only {@link Lock} handle.
 */
import type { LockLostError } from './errors.js';
import type { ScheduledTask } from './heartbeat/scheduler.js';
import type { Lock } from './lock.js';
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
  data: Uint8Array | undefined;
  state: LockState = 'held';
  sessionMonitor: SessionMonitor | undefined;
  /** Milliseconds before the lease runs out at which the lock is given up. */
  readonly safetyMarginMs: number;
  heartbeatTask: ScheduledTask<HeldLock> | undefined;
  expiryTask: ScheduledTask<HeldLock> | undefined;
  monitorTask: ScheduledTask<HeldLock> | undefined;
  /** Its batched heartbeat failed: the next one goes alone, with the single heartbeat's retries. */
  retriesAlone = false;
  /** Made when the signal is first asked for: many locks never are, and Node's signals are not small. */
  #loss: AbortController | undefined;
  #endReason: LockLostError | undefined;
  /** RVNs of this client's writes whose replies were lost; none (and no array) in the usual case. */
  #uncertain: string[] | undefined;
  /** The last write queued, while any is; none when the lock is idle. */
  #tail: Promise<unknown> | undefined;
  #writes = 0;

  constructor(fields: {
    key: LockKey;
    ownerName: string;
    recordVersionNumber: string;
    leaseDurationMs: number;
    lookupTime: number;
    data: Uint8Array | undefined;
    additionalAttributes: LockItem;
    deleteLockOnRelease: boolean;
    safetyMarginMs: number;
  }) {
    this.id = lockId(fields.key);
    this.partitionKey = fields.key.partitionKey;
    this.sortKey = fields.key.sortKey;
    this.ownerName = fields.ownerName;
    this.recordVersionNumber = fields.recordVersionNumber;
    this.leaseDurationMs = fields.leaseDurationMs;
    this.lookupTime = fields.lookupTime;
    this.data = fields.data;
    this.additionalAttributes = Object.keys(fields.additionalAttributes).length === 0 ? NO_ADDITIONAL_ATTRIBUTES : fields.additionalAttributes;
    this.deleteLockOnRelease = fields.deleteLockOnRelease;
    this.safetyMarginMs = fields.safetyMarginMs;
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

  /** Monotonic time until which the lock is safe to act on without a newer confirmed write. */
  safeUntil(): number {
    return this.lookupTime + this.leaseDurationMs - this.safetyMarginMs;
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
   * Remembers the RVN of a write whose outcome is unknown. Only the newest
   * few are kept: conditions have an operator limit, and dropping an old one
   * can at worst give up a lock this client still holds (it then lapses),
   * never let two clients hold it.
   */
  rememberUncertain(recordVersionNumber: string): void {
    const uncertain = (this.#uncertain ??= []);
    uncertain.push(recordVersionNumber);
    if (uncertain.length > MAX_UNCERTAIN_RVNS) uncertain.shift();
  }

  /** A write was confirmed: the table holds its RVN, so none of the uncertain ones. */
  forgetUncertain(): void {
    this.#uncertain = undefined;
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
