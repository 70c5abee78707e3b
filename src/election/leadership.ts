/**
 * What a candidate holds while it leads: the election's lock, seen as
 * leadership. Leadership lasts exactly as long as the lock is held.
 */
import type { TransactWriteItem } from '@aws-sdk/client-dynamodb';
import type { GuardedWriteOptions } from '../hold/guarded-write.js';
import { inspectAs, inspectCustom, type Inspect, type InspectOptions } from '../primitives/inspect.js';
import type { Lock } from '../lock.js';

export interface ResignOptions {
  /** Abandons the release call; if it was not applied, leadership lapses one lease after the last heartbeat. */
  readonly signal?: AbortSignal;
}

export class Leadership implements AsyncDisposable {
  readonly #lock: Lock;

  /** @internal Made by `LeaderElection`; this constructor is not part of the API. */
  constructor(lock: Lock) {
    this.#lock = lock;
  }

  /** The lock behind this leadership, for what the election API does not cover. */
  get lock(): Lock {
    return this.#lock;
  }
  get ownerName(): string {
    return this.#lock.ownerName;
  }
  get data(): Uint8Array | undefined {
    return this.#lock.data;
  }
  get dataText(): string | undefined {
    return this.#lock.dataText;
  }
  /** The lock's fencing token (client option `fencingTableName`): larger for every later term won by a fencing client. */
  get fencingToken(): bigint | undefined {
    return this.#lock.fencingToken;
  }

  /**
   * Aborts, with a `LockLostError` as its reason, the moment this candidate
   * can no longer be sure it leads: another candidate (or a Java client) took
   * the lock, its item was deleted, no heartbeat was confirmed in time, or it
   * resigned. Pass it to the work only the leader may do.
   */
  get signal(): AbortSignal {
    return this.#lock.signal;
  }

  /** True while the lock is held and within its safe time, on this process's clock. */
  get isLeader(): boolean {
    try {
      this.#lock.throwIfLost();
      return true;
    } catch {
      return false;
    }
  }

  /**
   * Throws the `LockLostError` unless this candidate still leads. It reads the
   * clock itself, so it is right even when a long pause delayed the timer
   * behind `signal`: call it right before each act only the leader may do.
   */
  throwIfLost(): void {
    this.#lock.throwIfLost();
  }

  /**
   * Writes `items` in one DynamoDB transaction that commits only while this
   * candidate still leads, however long it paused since it last checked
   * (`lock.transactWrite`). A refusal throws `LockLostError` and ends the
   * leadership; `lead()` then campaigns again.
   */
  transactWrite(items: readonly TransactWriteItem[], options?: GuardedWriteOptions): Promise<void> {
    return this.#lock.transactWrite(items, options);
  }

  /** The leadership's check as a raw `TransactWriteItems` entry, for a transaction you send yourself (`lock.guardCondition`). */
  guardCondition(): TransactWriteItem {
    return this.#lock.guardCondition();
  }

  /** Replaces the data stored with the lock (what observers see), with a heartbeat. */
  updateData(data: Uint8Array | string): Promise<void> {
    return this.#lock.sendHeartbeat({ data });
  }

  /**
   * Steps down: deletes the lock item, so a waiting candidate takes over at
   * its next read instead of after a lease. `signal` aborts first.
   *
   * @returns true when DynamoDB confirmed it; false when leadership was already lost.
   */
  resign(options: ResignOptions = {}): Promise<boolean> {
    return this.#lock.release({ deleteLock: true, signal: options.signal });
  }

  /** What `console.log(leadership)` shows: the election's key, the leader and whether it still leads. */
  [inspectCustom](depth: number, options: InspectOptions, inspect: Inspect): string {
    const { partitionKey, sortKey, ownerName, recordVersionNumber } = this.#lock;
    return inspectAs('Leadership', { partitionKey, sortKey, ownerName, recordVersionNumber, isLeader: this.isLeader }, depth, options, inspect);
  }

  /**
   * `await using leadership = await election.campaign()` resigns when the
   * scope ends; if that fails, leadership lapses. As a `Lock`'s dispose, it
   * also resigns a leadership whose lease ran out locally: the item may still
   * be this candidate's, and deleting it (only if it still has the RVN this
   * candidate wrote) lets the next one lead without waiting a lease.
   */
  async [Symbol.asyncDispose](): Promise<void> {
    await this.#lock.release({ deleteLock: true });
  }
}
