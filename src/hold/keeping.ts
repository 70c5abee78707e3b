/** What the lock keeper (lock-keeper.ts) keeps on each held lock it keeps. */
import type { ScheduledTask } from '../scheduler/deadline-scheduler.js';
import type { HeldLock } from './held-lock.js';

/** The keeper's tasks and bookkeeping for one lock; nothing else reads or changes them. */
export interface Keeping {
  readonly heartbeat: ScheduledTask<HeldLock> | undefined;
  readonly expiry: ScheduledTask<HeldLock>;
  readonly session: ScheduledTask<HeldLock> | undefined;
  /** The session monitor's callback ran since the last confirmed write. */
  sessionFired: boolean;
  /** Its batched heartbeat failed: the next one goes alone, with the single heartbeat's retries. */
  retriesAlone: boolean;
  /** A background heartbeat failed since the last confirmed one; `endangered` is told once per such episode. */
  endangered: boolean;
}
