/**
 * What `acquireLocks` returns: the locks of a group, taken together in one
 * transaction, each then held, heartbeated and lost on its own as any
 * {@link Lock} is.
 */
import type { Lock, ReleaseLockOptions } from './lock.js';
import { inspectAs, inspectCustom, type Inspect, type InspectOptions } from './primitives/inspect.js';

export class LockGroup implements AsyncDisposable {
  /** The locks, in the order their keys were given. */
  readonly locks: readonly Lock[];
  #signal: AbortSignal | undefined;

  /** @internal Groups are made by `LockClient`; this constructor is not part of the API. */
  constructor(locks: readonly Lock[]) {
    this.locks = Object.freeze([...locks]);
  }

  /**
   * Aborts the moment any lock of the group can no longer be trusted to be
   * held (its `signal` aborts), with that lock's {@link LockLostError} as
   * its reason.
   */
  get signal(): AbortSignal {
    this.#signal ??= AbortSignal.any(this.locks.map((lock) => lock.signal));
    return this.#signal;
  }

  /** Whether this client may act on every lock of the group now (`Lock.isHeld()` of each). */
  isHeld(): boolean {
    return this.locks.every((lock) => lock.isHeld());
  }

  /** Throws the first lock's {@link LockLostError} unless every lock {@link isHeld}. */
  throwIfLost(): void {
    for (const lock of this.locks) lock.throwIfLost();
  }

  /**
   * Releases every lock of the group, all at once, each as `Lock.release`
   * does. Every release is attempted; the first failure is then thrown.
   *
   * @returns true when DynamoDB confirmed every release.
   */
  async release(options?: ReleaseLockOptions): Promise<boolean> {
    return settled(await Promise.allSettled(this.locks.map((lock) => lock.release(options))));
  }

  /** `await using group = await client.acquireLocks(…)` releases every lock when the scope ends; one whose release fails lapses. */
  async [Symbol.asyncDispose](): Promise<void> {
    settled(await Promise.allSettled(this.locks.map((lock) => lock.release())));
  }

  /** What `console.log(group)` shows: the fields of {@link toJSON}. */
  [inspectCustom](depth: number, options: InspectOptions, inspect: Inspect): string {
    return inspectAs('LockGroup', this.toJSON(), depth, options, inspect);
  }

  toJSON(): object {
    return { locks: this.locks.map((lock) => lock.toJSON()) };
  }
}

/** Throws the first failure of releases attempted together; true when every one was confirmed. */
function settled(results: readonly PromiseSettledResult<boolean>[]): boolean {
  const failed = results.find((result) => result.status === 'rejected');
  if (failed !== undefined) throw failed.reason;
  return results.every((result) => result.status === 'fulfilled' && result.value);
}
