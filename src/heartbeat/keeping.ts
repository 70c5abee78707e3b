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
  /** Background heartbeat attempts failed since the last confirmed one: an episode, told `endangered` once. */
  failures: number;
  /** Its last heartbeat failed or could not go in a batch: the next one goes alone. */
  alone: boolean;
}

/** Each lock's keeping, made when the keeper starts keeping it. */
export class Keepings {
  readonly #byLock = new WeakMap<HeldLock, Keeping>();

  /** The lock's keeping, made the first time with the tasks `make` gives and no flag set. */
  of(held: HeldLock, make: () => KeepingTasks): Keeping {
    let keeping = this.#byLock.get(held);
    if (keeping === undefined) {
      const { heartbeat, expiry, session } = make();
      keeping = { heartbeat, expiry, session, sessionFired: false, failures: 0, alone: false };
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
