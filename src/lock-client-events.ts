/** The events of `LockClient.on`, about the locks a client holds. */
import type { LockLostError } from './base/errors.js';
import type { Lock } from './lock.js';

/** What `LockClient.on` reports. */
export interface LockClientEvents {
  /**
   * A held lock was lost: taken over, deleted, marked released by someone
   * else, or not renewed within its lease minus the safety margin. Fires once
   * per lock, at the moment its `signal` aborts. Not for locks this client
   * released itself.
   */
  lost: { readonly lock: Lock; readonly error: LockLostError };
  /**
   * A background heartbeat failed and the lock is still held: the first
   * failure since the last confirmed heartbeat. `msUntilLost` is what is left
   * of the lease before the lock is given up. Fires again only after a
   * heartbeat was confirmed in between.
   */
  endangered: { readonly lock: Lock; readonly error: unknown; readonly msUntilLost: number };
  /**
   * Every failed background heartbeat attempt, retried or not. A refused
   * heartbeat (the lock is gone) is reported by `lost` instead.
   */
  heartbeatError: { readonly lock: Lock; readonly error: unknown; readonly willRetry: boolean };
  /** Every confirmed background heartbeat; `lagMs` is how late it started after it was due. */
  heartbeat: { readonly lock: Lock; readonly lagMs: number };
}
