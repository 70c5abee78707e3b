/** The options of one `acquireLock` call, and their checks before any request. */
import { InvalidArgumentError } from '../base/errors.js';
import type { LockKey } from '../base/lock-key.js';
import { toBytes } from '../primitives/bytes.js';
import {
  MAX_ITEM_BYTES,
  encodeLockItem,
  validateItemSize,
  validateLockKey,
  type AdditionalAttributes,
  type LockItem,
  type LockTable,
} from '../protocol/index.js';
import { leaseEndOf, type InvocationDeadline, type LeaseEnd } from '../hold/lease-end.js';
import { checkSignal } from '../settings/argument-checks.js';
import { ACQUIRE_DEFAULTS } from '../settings/defaults.js';
import { checkDuration, checkLockLease, checkRefreshPeriod, safetyMarginFor } from '../settings/options.js';

/** Options of one `acquireLock` call (Java's `AcquireLockOptions`, PROTOCOL.md §8.2). */
export interface AcquireLockOptions {
  /** The sort key value; required exactly when the table has a sort key. */
  readonly sortKey?: string;
  /** Data to store with the lock (a string is stored as its UTF-8 bytes). @default none */
  readonly data?: Uint8Array | string;
  /**
   * Write `data` even when the item already carries data. When false, data
   * left by the previous holder is carried over. @default true
   */
  readonly replaceData?: boolean;
  /** Delete the item on release (true) or keep it marked released (false). @default true */
  readonly deleteLockOnRelease?: boolean;
  /** Only take a lock whose item already exists (released or expired); never create one. @default false */
  readonly acquireOnlyIfLockAlreadyExists?: boolean;
  /** Milliseconds between reads while waiting, at least 10. @default 1000 */
  readonly refreshPeriod?: number;
  /**
   * Opt-in turns, for even shares of a lock that clients release and ask
   * for again at once: how long this client may keep such a lock (each call
   * within `refreshPeriod` of its release) before it stands aside: the next
   * such call sends nothing for one `refreshPeriod` after the release, so
   * that waiters of other clients can take the lock; while nobody takes it
   * then, up to 32 times as long. With one `refreshPeriod`, shares even
   * out over some tens of turns each. A call that may not wait a refresh
   * period (`shouldSkipBlockingWait`, or `additionalTimeToWaitForLock`
   * below `refreshPeriod`) never stands aside.
   * @default Infinity (never stands aside, as Java)
   */
  readonly turnLength?: number;
  /**
   * Milliseconds to wait beyond the lease of the first holder seen; `Infinity`
   * waits until the lock is acquired or the signal aborts. @default 1000
   */
  readonly additionalTimeToWaitForLock?: number;
  /** Lease of this lock in milliseconds; waiters read it from the item. @default the client's `leaseDuration` */
  readonly leaseDuration?: number;
  /** Extra attributes stored on the item. Protocol attribute names are refused. @default none */
  readonly additionalAttributes?: AdditionalAttributes;
  /** Write with UpdateItem, keeping attributes of the old item this write does not set. @default false */
  readonly updateExistingLockRecord?: boolean;
  /** Take a released lock only if nobody took it since it was read. @default false */
  readonly acquireReleasedLocksConsistently?: boolean;
  /** Return the lock this client already holds instead of waiting for it. @default false */
  readonly reentrant?: boolean;
  /**
   * Never wait for a lock someone else holds: fail at once with
   * `LockCurrentlyUnavailableError`. Repeated calls still take over a lock
   * whose RVN stayed unchanged for its lease. @default false
   */
  readonly shouldSkipBlockingWait?: boolean;
  /** Call `callback` once the lock has gone `safeTimeWithoutHeartbeat` ms without a confirmed heartbeat. */
  readonly sessionMonitor?: {
    readonly safeTimeWithoutHeartbeat: number;
    readonly callback?: () => void;
  };
  /**
   * When the process taking the lock will be stopped, e.g. a Lambda
   * invocation: `{ remainingMs: context.getRemainingTimeInMillis() }`, or `{ at }`
   * on the client's monotonic clock. Every write of the lock, acquisition and
   * heartbeats, then states a lease that ends no later than that moment plus
   * `killOverrunMs` (default 2000, Lambda's cap on its shutdown), so that a
   * waiter takes over about then, not a whole lease after the last
   * heartbeat. The lock's safe time ends a safety margin before the deadline
   * (`LockLostError` kind `deadline`), and the call gives up then
   * (`LockNotGrantedError`). A deadline no more than the safety margin away
   * is refused (`DEADLINE_TOO_SOON`). @default none (leases are not bounded)
   */
  readonly invocationDeadline?: InvocationDeadline;
  /** Cancels the wait at once; rejects with `signal.reason`. */
  readonly signal?: AbortSignal;
}

/** Every option `acquireLock` takes, by name (argument-checks.ts refuses others). */
export const ACQUIRE_LOCK_OPTION_NAMES: Readonly<Record<keyof AcquireLockOptions, true>> = {
  sortKey: true,
  data: true,
  replaceData: true,
  deleteLockOnRelease: true,
  acquireOnlyIfLockAlreadyExists: true,
  refreshPeriod: true,
  turnLength: true,
  additionalTimeToWaitForLock: true,
  leaseDuration: true,
  additionalAttributes: true,
  updateExistingLockRecord: true,
  acquireReleasedLocksConsistently: true,
  reentrant: true,
  shouldSkipBlockingWait: true,
  sessionMonitor: true,
  invocationDeadline: true,
  signal: true,
};

/** What of the client's settings an acquisition follows. */
export interface AcquireSettings {
  readonly table: LockTable;
  readonly ownerName: string;
  readonly defaultLeaseDuration: number;
  readonly heartbeatPeriod: number;
  readonly backgroundHeartbeats: boolean;
  /** The client's `safetyMargin` option, if set. */
  readonly safetyMargin: number | undefined;
}

/** The options an acquisition fills in when the caller leaves them out. */
type Defaulted = 'refreshPeriod' | 'additionalTimeToWaitForLock' | 'turnLength' | 'leaseDuration' | 'replaceData' | 'deleteLockOnRelease';

/** A call's options, checked, with every default filled in (`Options`: those of one lock or of a group). */
export type Resolved<Options extends Pick<AcquireLockOptions, Defaulted>> = Options & Required<Pick<AcquireLockOptions, Defaulted>>;

export type ResolvedAcquireOptions = Resolved<AcquireLockOptions> & {
  /** The end of the process taking the lock, from `invocationDeadline`. */
  readonly leaseEnd?: LeaseEnd | undefined;
};

/** What `invocationDeadline` bounds, checked for a call acquiring at `now` with `options` resolved; none without it. */
export function leaseEndFor(ctx: AcquireSettings, options: Resolved<AcquireLockOptions>, now: number): LeaseEnd | undefined {
  const given = options.invocationDeadline;
  return given === undefined ? undefined : leaseEndOf(given, now, safetyMarginFor(options.leaseDuration, ctx));
}

/**
 * Checks what of a call's options does not depend on its key, and fills in
 * their defaults: the one place an acquisition reads them.
 */
export function resolveAcquireOptions<Options extends Pick<AcquireLockOptions, Defaulted | 'signal' | 'sessionMonitor'>>(
  ctx: AcquireSettings,
  options: Options,
): Resolved<Options> {
  checkSignal('signal', options.signal);
  const leaseDuration = options.leaseDuration === undefined ? ctx.defaultLeaseDuration : checkLockLease(options.leaseDuration, ctx);
  const monitor = options.sessionMonitor;
  if (monitor !== undefined) {
    const safe = monitor.safeTimeWithoutHeartbeat;
    if (!(typeof safe === 'number' && safe > ctx.heartbeatPeriod && safe < leaseDuration)) {
      throw new InvalidArgumentError(
        'INVALID_SESSION_MONITOR',
        `sessionMonitor.safeTimeWithoutHeartbeat (${String(safe)} ms) must be greater than heartbeatPeriod (${ctx.heartbeatPeriod} ms) and less than the lease (${leaseDuration} ms)`,
      );
    }
  }
  const wait = { allowInfinity: true };
  const refreshPeriod = checkRefreshPeriod(options.refreshPeriod ?? ACQUIRE_DEFAULTS.refreshPeriod);
  return {
    ...options,
    refreshPeriod,
    turnLength: checkDuration('turnLength', options.turnLength ?? ACQUIRE_DEFAULTS.turnLength, wait),
    additionalTimeToWaitForLock: checkDuration(
      'additionalTimeToWaitForLock',
      options.additionalTimeToWaitForLock ?? ACQUIRE_DEFAULTS.additionalTimeToWaitForLock,
      wait,
    ),
    leaseDuration,
    replaceData: options.replaceData ?? ACQUIRE_DEFAULTS.replaceData,
    deleteLockOnRelease: options.deleteLockOnRelease ?? ACQUIRE_DEFAULTS.deleteLockOnRelease,
  };
}

/** Checks what of a call depends on its key (the key, the size of the item it writes), without DynamoDB. */
export function validateAcquireKey(ctx: AcquireSettings, key: LockKey, options: Resolved<AcquireLockOptions>): void {
  validateLockKey(ctx.table, key);
  // Most calls carry neither data nor attributes, and their item is far below the limit: not encoded for nothing.
  if (options.data !== undefined || options.additionalAttributes !== undefined || !surelyFits(ctx, key)) {
    validateItemSize(lockItemOf(ctx, key, options));
  }
}

/**
 * The item a call with checked options writes, but for its RVN (always 36
 * characters): encoding it also checks the names of its attributes.
 */
export function lockItemOf(ctx: AcquireSettings, key: LockKey, options: ResolvedAcquireOptions): LockItem {
  return encodeLockItem(ctx.table, {
    ...key,
    ownerName: ctx.ownerName,
    leaseDurationMs: options.leaseDuration,
    recordVersionNumber: '00000000-0000-0000-0000-000000000000',
    data: toBytes(options.data),
    additionalAttributes: options.additionalAttributes ?? {},
  });
}

/**
 * Whether an item without data or attributes of its own fits for sure:
 * a UTF-16 code unit is at most 3 bytes of UTF-8, and the protocol's own
 * names and values (lease, RVN, flags, stamp) take well under 512 bytes.
 */
function surelyFits(ctx: AcquireSettings, key: LockKey): boolean {
  const { partitionKeyName, sortKeyName } = ctx.table;
  const units =
    key.partitionKey.length + (key.sortKey?.length ?? 0) + ctx.ownerName.length + partitionKeyName.length + (sortKeyName?.length ?? 0);
  return 3 * units + 512 <= MAX_ITEM_BYTES;
}
