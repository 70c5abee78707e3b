/** What the lock keeper (lock-keeper.ts) keeps on each held lock it keeps. */
import type { ScheduledTask } from './deadline-scheduler.js';
import type { HeldLock } from '../hold/held-lock.js';

/** The keeper's tasks for one lock. */
export interface KeepingTasks {
  readonly heartbeat: ScheduledTask<HeldLock> | undefined;
  readonly expiry: ScheduledTask<HeldLock>;
  readonly session: ScheduledTask<HeldLock> | undefined;
}

/** The keeper's tasks and bookkeeping for one lock; nothing else reads or changes them. */
export interface Keeping extends KeepingTasks {
  /** The session monitor's callback ran since the last confirmed write. */
  sessionFired: boolean;
  /** Its batched heartbeat failed: the next one goes alone, with the single heartbeat's retries. */
  retriesAlone: boolean;
  /** A background heartbeat failed since the last confirmed one; `endangered` is told once per such episode. */
  endangered: boolean;
}

/** Each lock's keeping, made when the keeper starts keeping it. */
export class Keepings {
  readonly #byLock = new WeakMap<HeldLock, Keeping>();

  /** The lock's keeping, made the first time with the tasks `make` gives and no flag set. */
  of(held: HeldLock, make: () => KeepingTasks): Keeping {
    let keeping = this.#byLock.get(held);
    if (keeping === undefined) {
      const { heartbeat, expiry, session } = make();
      keeping = { heartbeat, expiry, session, sessionFired: false, retriesAlone: false, endangered: false };
      this.#byLock.set(held, keeping);
    }
    return keeping;
  }

  /** The lock's keeping while the keeper keeps it: held, no release begun, not ended. */
  kept(held: HeldLock): Keeping | undefined {
    return held.state === 'held' ? this.#byLock.get(held) : undefined;
  }

  /** The lock's keeping, whatever its state. */
  any(held: HeldLock): Keeping | undefined {
    return this.#byLock.get(held);
  }
}
