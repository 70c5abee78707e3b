/**
 * What callers hold: {@link Lock}, a handle on a lock this client acquired,
 * and {@link LockSnapshot}, a read-only view of a lock read from the table.
 */
import type { TransactWriteItem } from '@aws-sdk/client-dynamodb';
import { textOf, toBytes } from './primitives/bytes.js';
import { InvalidArgumentError, SessionMonitorNotSetError, type LockHolder } from './base/errors.js';
import type { GuardedWriteOptions } from './hold/guarded-write.js';
import type { LockHandOff } from './protocol/index.js';
import type { HeldLock } from './hold/held-lock.js';
import type { LockState } from './hold/lock-state.js';
import { inspectAs, inspectCustom, type Inspect, type InspectOptions } from './primitives/inspect.js';
import {
  decodeAdditionalAttributes,
  encodeAdditionalAttributes,
  type AdditionalAttributes,
  type LockItem,
  type LockRecord,
} from './protocol/index.js';

export interface ReleaseLockOptions {
  /** Delete the item (true) or keep it marked released (false). @default the lock's `deleteLockOnRelease` */
  readonly deleteLock?: boolean;
  /** Data to leave on an item that is kept (only with `deleteLock: false`). */
  readonly data?: Uint8Array | string;
  /**
   * When the release is not confirmed (no answer, a 5xx, or a refusal that changed nothing), return false instead of
   * throwing; the lock then lapses. Either way it has ended; after a refusal that changed nothing, `release()` may be
   * called again to free it sooner.
   * @default false
   */
  readonly bestEffort?: boolean;
  /**
   * Abandons the release call; its outcome is then unknown and the lock lapses if it was not applied. A release
   * unanswered for the lock's lease is abandoned in any case (`DynamoDBTimeoutError`, or false with `bestEffort`).
   */
  readonly signal?: AbortSignal;
}

export interface SendHeartbeatOptions {
  /** Replace the lock's data. */
  readonly data?: Uint8Array | string;
  /** Remove the lock's data. */
  readonly deleteData?: boolean;
  /** Lease to advertise from now on, in milliseconds. @default the lock's current lease */
  readonly leaseDuration?: number;
}

/** The operations a {@link Lock} delegates to the client that acquired it. */
export interface LockOperations {
  releaseLock(held: HeldLock, options?: ReleaseLockOptions): Promise<boolean>;
  sendHeartbeat(held: HeldLock, options?: SendHeartbeatOptions): Promise<void>;
  transactWrite(held: HeldLock, items: readonly TransactWriteItem[], options?: GuardedWriteOptions): Promise<void>;
  guardCondition(held: HeldLock): TransactWriteItem;
  handOff(held: HeldLock): Promise<LockHandOff>;
}

/** The record behind a handle, if the handle was made with `ops` (that is, by the client asking). */
let heldLockBehind: (lock: Lock, ops: LockOperations) => HeldLock | undefined;

/** One client's handles on the locks it holds, and the way back from a handle to its record. Internal. */
export class LockHandles {
  /** The user's handle of each lock held, made once per lock. */
  readonly #handles = new WeakMap<HeldLock, Lock>();
  readonly #ops: LockOperations;

  constructor(ops: LockOperations) {
    this.#ops = ops;
  }

  /** The user's handle on a lock this client holds: one per lock, made when it is first asked for. */
  of(held: HeldLock): Lock {
    let lock = this.#handles.get(held);
    if (lock === undefined) {
      lock = new Lock(held, this.#ops);
      this.#handles.set(held, lock);
    }
    return lock;
  }

  /** The record behind a handle of this client's. */
  heldBehind(lock: Lock): HeldLock {
    const held = lock instanceof Lock ? heldLockBehind(lock, this.#ops) : undefined;
    if (held !== undefined) return held;
    throw new InvalidArgumentError('INVALID_OPTION', 'This lock was not acquired by this client; only that client can heartbeat or release it');
  }
}

/** A lock acquired by this client. Getters return copies; the state changes as heartbeats, release or loss happen. */
export class Lock implements AsyncDisposable {
  readonly #held: HeldLock;
  readonly #ops: LockOperations;

  static {
    // A field of the handle rather than a client-side map from handles to records: one
    // pointer per lock instead of a weak map entry, with tens of thousands of locks held.
    heldLockBehind = (lock, ops) => (#ops in lock && lock.#ops === ops ? lock.#held : undefined);
  }

  /** @internal Locks are made by `LockClient`; this constructor is not part of the API. */
  constructor(held: HeldLock, ops: LockOperations) {
    this.#held = held;
    this.#ops = ops;
  }

  get partitionKey(): string {
    return this.#held.partitionKey;
  }
  get sortKey(): string | undefined {
    return this.#held.sortKey;
  }
  get ownerName(): string {
    return this.#held.ownerName;
  }
  /** The RVN this client last wrote. */
  get recordVersionNumber(): string {
    return this.#held.recordVersionNumber;
  }
  /** The lease advertised with the last confirmed write, in milliseconds. */
  get leaseDuration(): number {
    return this.#held.leaseDurationMs;
  }
  /** Monotonic time (ms) just before the last confirmed acquire or heartbeat was sent. */
  get lookupTime(): number {
    return this.#held.lookupTime;
  }
  get data(): Uint8Array | undefined {
    return toBytes(this.#held.data);
  }
  /** The data as text, when it is UTF-8 (as data given as a string is); `undefined` when there is none or it is binary. */
  get dataText(): string | undefined {
    return textOf(this.#held.data);
  }
  get additionalAttributes(): AdditionalAttributes {
    return decodeAdditionalAttributes(this.#held.additionalAttributes);
  }
  get deleteLockOnRelease(): boolean {
    return this.#held.deleteLockOnRelease;
  }
  /**
   * With the client option `fencingTableName`: a number larger than that of
   * every earlier acquisition of this key by a fencing client. Hand it to the
   * resource the lock protects, which refuses requests carrying a smaller one
   * than it has seen. Acquisitions by Java clients, or by clients without
   * fencing, do not move it (see README). `undefined` without fencing.
   */
  get fencingToken(): bigint | undefined {
    return this.#held.fencingToken;
  }
  get state(): LockState {
    return this.#held.state;
  }
  get isReleased(): boolean {
    return this.#held.state === 'released';
  }

  /**
   * Aborts, with a {@link LockLostError} as its reason, the moment this
   * client can no longer be sure it holds the lock: taken over, deleted,
   * not renewed within its lease minus the safety margin, or released. A
   * release aborts it as it begins (`release()`, `close()`, a resignation),
   * since it may be applied, and the next holder take the lock, before its
   * reply comes.
   */
  get signal(): AbortSignal {
    return this.#held.signal;
  }

  /**
   * Whether this client may act on the lock now: held, and within its safe
   * time (the lease of the last confirmed write, less the safety margin,
   * shortened by any write still in doubt, counted on the monotonic clock
   * and on the wall clock, which runs on while the host is suspended). It
   * reads the clocks itself, so it is right even when a long pause (GC, a
   * stopped process) delayed the timer that aborts `signal`; a lock found
   * past its safe time ends as lost here. Every other check of the library
   * (`throwIfLost`, `safeTimeLeft`, `LockClient.hasLock`, reentrant
   * acquisition, guarded writes) asks this.
   */
  isHeld(): boolean {
    return this.#held.isHeld();
  }

  /** Milliseconds this client may still act on the lock without a newer confirmed heartbeat; 0 unless {@link isHeld}. */
  safeTimeLeft(): number {
    return this.#held.isHeld() ? Math.max(0, this.#held.safeTimeLeft()) : 0;
  }

  /**
   * Throws the {@link LockLostError} unless {@link isHeld}: call it right
   * before each effect the lock guards.
   */
  throwIfLost(): void {
    this.#held.throwUnlessHeld();
  }

  /**
   * Java's `LockItem.isExpired()`: true once the lease ran out on this
   * client's clock since the last confirmed write, or the lock is not held.
   * It ignores the safety margin, a shortened lease still in doubt and a
   * host suspend; act on {@link isHeld} instead.
   */
  isExpired(): boolean {
    return this.#held.leaseRanOut();
  }

  release(options?: ReleaseLockOptions): Promise<boolean> {
    return this.#ops.releaseLock(this.#held, options);
  }

  sendHeartbeat(options?: SendHeartbeatOptions): Promise<void> {
    return this.#ops.sendHeartbeat(this.#held, options);
  }

  /**
   * Writes `items` (DynamoDB `TransactWriteItems` entries: `Put`, `Update`,
   * `Delete`, `ConditionCheck`, on any table, 1 to 99 of them) in one
   * transaction with a check of the lock item, so that they commit only
   * while this client still holds the lock: a pause between your last check
   * and the commit cannot let them land after someone else took the lock.
   *
   * @throws LockLostError when the lock had moved (`holder` names who holds
   *   it now); nothing was written and the lock ends as lost.
   * @throws GuardedWriteCanceledError when DynamoDB canceled the transaction
   *   for one of your items (`cancellations` says which, by index); nothing
   *   was written and the lock is still held.
   * @throws GuardedWriteOutcomeUnknownError when no definite answer came: it
   *   may have committed. The lock is still held.
   */
  transactWrite(items: readonly TransactWriteItem[], options?: GuardedWriteOptions): Promise<void> {
    return this.#ops.transactWrite(this.#held, items, options);
  }

  /**
   * The lock's check as one `TransactWriteItems` entry (a `ConditionCheck`
   * on the lock item), for a transaction you send yourself: it fails once
   * anyone else has taken the lock. It names the RVN of this client's last
   * write of the lock, so it holds until the next heartbeat: build it right
   * before sending. A failure of it whose `Item` still shows this client's
   * owner name means a heartbeat came in between: build it again and resend.
   * {@link transactWrite} has none of that to handle.
   *
   * @throws LockLostError unless the lock is held and within its safe time.
   */
  guardCondition(): TransactWriteItem {
    return this.#ops.guardCondition(this.#held);
  }

  /**
   * Hands the lock to another client (docs/hand-over.md): this client stops
   * keeping it at once (heartbeats stop; `signal` aborts with a
   * {@link LockLostError} of kind `handedOff`), waits for its writes under
   * way, and returns a handle, plain JSON, that `client.adoptLock()` takes in
   * any process. Do not act on the lock from here on: it is the adopter's.
   *
   * @throws LockLostError when the lock was not held, or a write under way found it taken.
   */
  handOff(): Promise<LockHandOff> {
    return this.#ops.handOff(this.#held);
  }

  /** Milliseconds until the session monitor's safe time runs out (negative once past). */
  millisecondsUntilDangerZoneEntered(): number {
    const monitor = this.#held.sessionMonitor;
    if (monitor === undefined) throw new SessionMonitorNotSetError('This lock was acquired without a sessionMonitor');
    return this.#held.lookupTime + monitor.safeTimeWithoutHeartbeat - this.#held.clockNow();
  }

  amIAboutToExpire(): boolean {
    return this.millisecondsUntilDangerZoneEntered() <= 0;
  }

  /**
   * `await using lock = await client.acquireLock(…)` releases the lock when
   * the scope ends, as `release()` does: also a lock given up because its
   * lease ran out locally, which may still be this client's in the table.
   */
  async [Symbol.asyncDispose](): Promise<void> {
    await this.release();
  }

  /** What `console.log(lock)` shows: the fields of {@link toJSON}. */
  [inspectCustom](depth: number, options: InspectOptions, inspect: Inspect): string {
    return inspectAs('Lock', this.toJSON(), depth, options, inspect);
  }

  toJSON(): object {
    return {
      partitionKey: this.partitionKey,
      sortKey: this.sortKey,
      ownerName: this.ownerName,
      recordVersionNumber: this.recordVersionNumber,
      leaseDuration: this.leaseDuration,
      state: this.state,
      ...(this.fencingToken === undefined ? {} : { fencingToken: this.fencingToken.toString() }),
    };
  }
}

/**
 * A lock as read from the table, by whoever holds it. It cannot be released or
 * heartbeated: only the {@link Lock} returned by an acquisition can.
 */
export class LockSnapshot implements LockHolder {
  readonly partitionKey: string;
  readonly sortKey: string | undefined;
  readonly ownerName: string;
  readonly recordVersionNumber: string;
  /** The lease the holder advertised, in milliseconds. */
  readonly leaseDuration: number;
  readonly isReleased: boolean;
  /** Monotonic time (ms) at which the read that returned this item completed. */
  readonly observedAt: number;
  readonly #data: Uint8Array | undefined;
  readonly #additionalAttributes: LockItem;

  /** @internal Snapshots are made by `LockClient` and `watchLock`; this constructor is not part of the API. */
  constructor(record: LockRecord, observedAt: number) {
    this.partitionKey = record.partitionKey;
    this.sortKey = record.sortKey;
    this.ownerName = record.ownerName;
    this.recordVersionNumber = record.recordVersionNumber;
    this.leaseDuration = record.leaseDurationMs;
    this.isReleased = record.isReleased;
    this.observedAt = observedAt;
    this.#data = toBytes(record.data);
    this.#additionalAttributes = encodeAdditionalAttributes(record.additionalAttributes);
  }

  get data(): Uint8Array | undefined {
    return toBytes(this.#data);
  }
  /** The data as text, when it is UTF-8 (as data given as a string is); `undefined` when there is none or it is binary. */
  get dataText(): string | undefined {
    return textOf(this.#data);
  }
  get additionalAttributes(): AdditionalAttributes {
    return decodeAdditionalAttributes(this.#additionalAttributes);
  }
}
