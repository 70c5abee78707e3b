/**
 * The client's private record of a lock it holds, and the one owner of its
 * state: every change (a write confirmed or in doubt, a release begun, the
 * end) is a method here. Users see it only through the read-only `Lock`
 * handle.
 */
import type { MonotonicClock } from '../base/clock.js';
import { LockLostError, type LockHolder, type LockLossKind } from '../base/errors.js';
import { lockId } from '../base/lock-key.js';
import type { LockItem } from '../protocol/index.js';
import type { LeaseEnd } from './lease-end.js';
import type { HeldLockFields, LockState, LockWrite, SessionMonitor } from './lock-state.js';
import { UncertainWrites } from './uncertain-writes.js';
import { WriteQueue } from './write-queue.js';

/**
 * Told when a lock ends. `announce` is false only for an end its holder
 * caused and already hears of (a release whose outcome is unknown).
 */
export type LockEnded = (held: HeldLock, announce: boolean) => void;

/** `Date.now()` counts whole milliseconds. */
const WALL_CLOCK_RESOLUTION_MS = 1;

const releaseStarted = (): DOMException => new DOMException('a release of the lock started', 'AbortError');
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
  readonly sessionMonitor: SessionMonitor | undefined;
  /** The end of the process holding it, which bounds its writes' leases and its safe time (`invocationDeadline`). */
  readonly leaseEnd: LeaseEnd | undefined;
  readonly #clock: MonotonicClock;
  /** Milliseconds before a lease runs out at which the lock is given up: it follows the lease in force. */
  readonly #marginFor: (leaseDurationMs: number) => number;
  readonly #onEnd: LockEnded;
  #state: LockState = 'held';
  #recordVersionNumber: string;
  #leaseDurationMs: number;
  #lookupTime: number;
  #lookupWallTime: number | undefined;
  #data: Uint8Array | undefined;
  /** Its writes, one at a time, while any is queued; a release stops waiting for the one in flight. */
  #writeQueue: WriteQueue | undefined;
  /** Made when the signal is first asked for: many locks never are, and Node's signals are not small. */
  #loss: AbortController | undefined;
  /** Made when first asked for, as the signal is: a lock this client released seldom needs one, and errors are not cheap. */
  #endReason: LockLostError | (() => LockLostError) | undefined;
  /** This client's writes whose outcome is unknown; none in the usual case. */
  #uncertain: UncertainWrites | undefined;
  /** Java's `holdLockOnServiceUnavailable` restarted the lease since the last confirmed write, without a confirmed one. */
  #keptUnconfirmed = false;
  /** DynamoDB answered its release and changed nothing: the item is still ours, for another release. */
  #releaseUnapplied = false;
  readonly #releasedByUs = (): LockLostError => new LockLostError('released', 'it was released by this client', this);

  constructor(fields: HeldLockFields<HeldLock>) {
    this.id = lockId(fields.key);
    this.partitionKey = fields.key.partitionKey;
    this.sortKey = fields.key.sortKey;
    this.ownerName = fields.ownerName;
    this.#recordVersionNumber = fields.recordVersionNumber;
    this.#leaseDurationMs = fields.leaseDurationMs;
    this.#lookupTime = fields.lookupTime;
    this.#lookupWallTime = fields.lookupWallTime;
    this.#data = fields.data;
    this.additionalAttributes = Object.keys(fields.additionalAttributes).length === 0 ? NO_ADDITIONAL_ATTRIBUTES : fields.additionalAttributes;
    this.deleteLockOnRelease = fields.deleteLockOnRelease;
    this.fencingToken = fields.fencingToken;
    this.sessionMonitor = fields.sessionMonitor;
    this.leaseEnd = fields.leaseEnd;
    this.#clock = fields.clock;
    this.#marginFor = fields.marginFor;
    this.#onEnd = fields.onEnd ?? (() => undefined);
  }

  get state(): LockState {
    return this.#state;
  }
  /** The RVN of this client's last confirmed write. */
  get recordVersionNumber(): string {
    return this.#recordVersionNumber;
  }
  /** The lease of the last confirmed write: the lease in force. */
  get leaseDurationMs(): number {
    return this.#leaseDurationMs;
  }
  /** Monotonic time just before the last confirmed write was sent. */
  get lookupTime(): number {
    return this.#lookupTime;
  }
  get data(): Uint8Array | undefined {
    return this.#data;
  }

  /** The safety margin of the lease in force. */
  get safetyMarginMs(): number {
    return this.#marginFor(this.#leaseDurationMs);
  }

  /** Aborts, with a {@link LockLostError}, once the lock ends for any reason or a release of it begins. */
  get signal(): AbortSignal {
    if (this.#loss === undefined) {
      this.#loss = new AbortController();
      const reason = this.endReason;
      if (reason !== undefined) this.#loss.abort(reason);
    }
    return this.#loss.signal;
  }

  /** Why the lock ended, once it has. */
  get endReason(): LockLostError | undefined {
    if (typeof this.#endReason === 'function') this.#endReason = this.#endReason();
    return this.#endReason;
  }

  /**
   * Monotonic time until which the lock is safe to act on without a newer
   * confirmed write: the earliest that the last confirmed write, or any
   * later write whose outcome is unknown, allows (each by its own send time
   * and lease, less the margin of that lease), and the end of its holder's process allows.
   */
  safeUntil(): number {
    return Math.min(
      this.#lookupTime + this.#leaseDurationMs - this.safetyMarginMs,
      this.#uncertain?.safeUntil ?? Infinity,
      this.leaseEnd?.safeUntil ?? Infinity,
    );
  }

  /**
   * Milliseconds of safe time left. Time counts on the monotonic clock, but
   * also on the wall clock since the last confirmed write where the clock
   * has one: the monotonic clock stands still while the host is suspended,
   * and the lease runs on meanwhile. Either can only shorten what is left.
   */
  safeTimeLeft(): number {
    const clock = this.#clock;
    let now = clock.now();
    if (clock.wallNow !== undefined && this.#lookupWallTime !== undefined) {
      // Less the wall clock's resolution, so that its whole milliseconds never end a lock early.
      const wallElapsed = clock.wallNow() - this.#lookupWallTime - WALL_CLOCK_RESOLUTION_MS;
      now = Math.max(now, this.#lookupTime + wallElapsed);
    }
    return this.safeUntil() - now;
  }

  /**
   * The one answer to "may I act on this lock now?": held, and within its
   * safe time. A lock found past its safe time ends as lost here, even if
   * its expiry task has not run yet (a long pause delays timers).
   */
  isHeld(): boolean {
    if (this.#state === 'held' && this.safeTimeLeft() <= 0) this.expire();
    return this.#state === 'held';
  }

  /** Why the lock may not be acted on now; none while {@link isHeld}. */
  notHeldReason(): LockLostError | undefined {
    if (this.isHeld()) return undefined;
    return this.endReason ?? new LockLostError('released', 'it is being released', this);
  }

  /** Throws {@link notHeldReason}, if there is one. */
  throwUnlessHeld(): void {
    const reason = this.notHeldReason();
    if (reason !== undefined) throw reason;
  }

  /**
   * Java's lease-only reading: the lease ran out on this client's clock
   * since the last confirmed write, or the lock is not held. It ignores the
   * safety margin, a shortened lease in doubt and a host suspend.
   */
  leaseRanOut(): boolean {
    return this.#state !== 'held' || this.#clock.now() - this.#lookupTime > this.#leaseDurationMs;
  }

  /** The lock's monotonic clock, read now. */
  clockNow(): number {
    return this.#clock.now();
  }

  /** RVNs of this client's writes whose replies were lost: the table may hold any of them. */
  get uncertainRecordVersionNumbers(): readonly string[] | undefined {
    return this.#uncertain?.recordVersionNumbers;
  }

  /** A write of the lock is under way or queued. */
  get writing(): boolean {
    return this.#writeQueue !== undefined;
  }

  /** A write was confirmed: the table holds its RVN (no uncertain one), its lease counts from its send, its data is the lock's. */
  confirmWrite(write: LockWrite): void {
    this.#recordVersionNumber = write.recordVersionNumber;
    this.#lookupTime = write.sentAt;
    this.#lookupWallTime = write.sentAtWall;
    this.#leaseDurationMs = write.leaseDurationMs;
    if (write.deleteData === true) this.#data = undefined;
    else if (write.data !== undefined) this.#data = write.data;
    this.#uncertain = undefined;
    this.#keptUnconfirmed = false;
  }

  /** Whether the safe time rests on confirmed writes only: nobody could have taken the item over within it. */
  get safeTimeConfirmed(): boolean {
    return !this.#keptUnconfirmed;
  }

  /** Remembers a write whose outcome is unknown: its RVN, which the table may now hold, and the safe time it allows. */
  rememberUncertain(write: LockWrite): void {
    (this.#uncertain ??= new UncertainWrites()).add(write, this.#leaseDurationMs, this.#marginFor);
  }

  /**
   * Java's `holdLockOnServiceUnavailable`: counts the lease from now
   * although no write was confirmed. The safe time of a write of unknown
   * outcome still bounds the lock (a shortened lease).
   */
  keepWithoutConfirmation(): void {
    this.#keptUnconfirmed = true;
    this.#lookupTime = this.#clock.now();
    this.#lookupWallTime = this.#clock.wallNow?.();
  }

  /**
   * A release starts: heartbeats stop, a write in flight is no longer waited for, and the signal aborts (the release
   * may be applied, and the lock taken, before any reply). A lock that lapsed locally, or whose release changed
   * nothing, may still be ours in the table and can be released (again). False when there is nothing to release.
   */
  beginRelease(): boolean {
    const ended =
      this.#state === 'lost' && (this.endReason?.kind === 'expired' || this.endReason?.kind === 'deadline' || this.#releaseUnapplied);
    if (this.#state !== 'held' && !ended) return false;
    if (!ended) {
      this.#state = 'releasing';
      this.#endReason = () => new LockLostError('released', 'it is being released by this client', this);
      this.#loss?.abort(this.endReason);
    }
    this.#writeQueue?.cutOff();
    return true;
  }

  /**
   * Its release was not confirmed: the lock lapses unless the release was applied (`unknown`), or released again
   * (`unapplied`: the item is still ours). It ends as lost, untold to listeners: its holder hears from the release.
   */
  releaseUnconfirmed(cause: unknown, outcome: 'unknown' | 'unapplied'): void {
    this.#releaseUnapplied ||= outcome === 'unapplied';
    const reason =
      outcome === 'unknown'
        ? 'its release got no answer; it is released or will lapse'
        : 'its release changed nothing; it lapses unless released again';
    this.#end('lost', new LockLostError('released', reason, this, { cause }), { announce: false });
  }

  /**
   * A hand-off starts: heartbeats stop and the signal aborts (the handle may be adopted before the hand-off returns);
   * unlike a release, writes under way are waited for, so that the handle names every RVN the table may hold.
   */
  beginHandOff(): void {
    this.#state = 'handingOff';
    this.#endReason = () => new LockLostError('handedOff', 'it was handed off by this client', this);
    this.#loss?.abort(this.endReason);
  }

  /** Handed off: this client no longer keeps it; its handle's adopter may. Unless a write under way lost it meanwhile. */
  handedOff(): void {
    this.#end('handedOff', this.endReason as LockLostError, { announce: false });
  }

  /** Released by this client; also a lock that had lapsed locally, now freed in the table. */
  released(): void {
    if (this.#state === 'lost') {
      this.#state = 'released';
      // A lapsed lock keeps the reason it lapsed; one whose earlier release changed nothing no longer waits for another.
      if (this.#releaseUnapplied) this.#endReason = this.#releasedByUs;
      return;
    }
    this.#end('released', this.#releasedByUs);
  }

  /**
   * A write of the lock was refused: it ends as lost with `error`, made by
   * the caller to name who holds the lock now. False when it had ended already.
   */
  loseWith(error: LockLostError): boolean {
    return this.#end('lost', error);
  }

  /** Ends the lock as lost (its signal aborts, the client tells listeners); returns the error it ended with. */
  lose(kind: LockLossKind, reason: string, details: { cause?: unknown; holder?: LockHolder | undefined } = {}): LockLostError {
    const error = new LockLostError(kind, reason, this, details);
    this.#end('lost', error);
    return this.endReason ?? error;
  }

  /**
   * The lock's safe time ran out, or is too short for a heartbeat to be
   * confirmed within it (`tooLate` says why): kind `deadline` when the end
   * of its holder's process bounds that safe time, `expired` otherwise.
   */
  expire(tooLate?: string): LockLostError {
    if (this.leaseEnd !== undefined && this.leaseEnd.safeUntil <= this.safeUntil()) {
      const reason = this.leaseEnd.reason();
      return this.lose('deadline', tooLate === undefined ? reason : `${tooLate}; ${reason}`);
    }
    return this.lose(
      'expired',
      tooLate ?? `no heartbeat was confirmed within its lease of ${this.#leaseDurationMs} ms minus the ${this.safetyMarginMs} ms safety margin`,
    );
  }

  /** Moves the lock to its final state and aborts its signal; only the first call counts. `reason` may be a maker. */
  #end(state: 'released' | 'lost' | 'handedOff', reason: LockLostError | (() => LockLostError), options: { announce?: boolean } = {}): boolean {
    if (this.#state === 'released' || this.#state === 'lost' || this.#state === 'handedOff') return false;
    this.#state = state;
    this.#endReason = reason;
    if (this.#loss !== undefined) this.#loss.abort(this.endReason);
    this.#onEnd(this, state === 'lost' && options.announce !== false);
    return true;
  }

  /** Waits for a write of the lock, unless a release of it starts meanwhile. */
  unlessReleaseStarts<T>(sending: Promise<T>): Promise<T> {
    // A release started meanwhile stops waiting for this write (its outcome is then unknown) rather than queue behind
    // it; the call may carry other locks' writes or a shared deadline, so it cannot be aborted for this lock alone.
    return this.#writeQueue?.unlessCutOff(sending, releaseStarted) ?? sending;
  }

  /** Queues a write of the lock (heartbeat, release, guarded write): it runs once the writes queued before it settle. */
  queueWrite<T>(write: () => Promise<T>): Promise<T> {
    this.#writeQueue ??= new WriteQueue(() => (this.#writeQueue = undefined));
    return this.#writeQueue.run(write);
  }
}
