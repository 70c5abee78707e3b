/**
 * What happens to held locks, told by the record (`HeldLock`); the client
 * turns these into its public events (`LockClientEvents`) with the user's
 * handle in place of the record.
 */
import type { LockLostError } from '../base/errors.js';
import type { HeldLock } from '../hold/held-lock.js';

export interface HoldEvents {
  lost: { readonly held: HeldLock; readonly error: LockLostError };
  endangered: { readonly held: HeldLock; readonly error: unknown; readonly msUntilLost: number };
  heartbeatError: { readonly held: HeldLock; readonly error: unknown; readonly willRetry: boolean };
  heartbeat: { readonly held: HeldLock; readonly lagMs: number };
  /** This client released the lock (also one that had lapsed locally, freed in the table). */
  released: { readonly held: HeldLock };
}
