/**
 * The acquire loop of the Java client (PROTOCOL.md §5): read the lock
 * consistently, take it when it is absent or released, and take it over only
 * after its RVN stayed unchanged for its whole lease on this process's
 * monotonic clock.
 */
import { randomUUID } from 'node:crypto';
import type { Logger } from '../logger.js';
import { toBytes } from '../primitives/bytes.js';
import type { MonotonicClock } from '../clock.js';
import {
  isClientSideError,
  isConditionalCheckFailed,
  isThrottling,
  isTransactionRace,
  httpStatusOf,
} from '../dynamodb/sdk-errors.js';
import {
  DynamoDBUnavailableError,
  InvalidArgumentError,
  LockCurrentlyUnavailableError,
  LockNotGrantedError,
  isMalformedLockItemError,
  type LockHolder,
} from '../errors.js';
import type { AcquisitionRequests } from '../dynamodb/acquisition-requests.js';
import { lockId } from '../hold/held-lock.js';
import { holderOf } from '../lock-holder.js';
import type { LockObservationCache } from './observation-cache.js';
import { ACQUIRE_DEFAULTS, checkDuration, checkLockLease } from '../options.js';
import {
  encodeAdditionalAttributes,
  validateItemSize,
  validateLockKey,
  encodeLockItem,
  type AcquisitionPath,
  type AdditionalAttributes,
  type LockItem,
  type LockKey,
  type LockRecord,
  type LockRecordToWrite,
  type LockTable,
} from '../protocol/index.js';
import type { KeySchemaProof } from './key-schema-proof.js';
import type { AcquisitionGate } from './acquisition-gate.js';
import type { LockPollers, PollSubscription } from './lock-poller.js';
import { AcquireDeadline } from './acquire-deadline.js';
import { StaleWatch } from './stale-watch.js';
import type { LockSighting } from '../dynamodb/read-lock.js';
import { classifyFailedWrite } from '../dynamodb/write-outcome.js';

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
  /** Milliseconds between reads while waiting. @default 1000 */
  readonly refreshPeriod?: number;
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
  /** Cancels the wait at once; rejects with `signal.reason`. */
  readonly signal?: AbortSignal;
}

export interface AcquireContext {
  /** The reads and writes of an acquisition, fenced when the client fences. */
  readonly requests: AcquisitionRequests;
  readonly table: LockTable;
  readonly ownerName: string;
  readonly defaultLeaseDuration: number;
  readonly heartbeatPeriod: number;
  readonly backgroundHeartbeats: boolean;
  /** The client's `safetyMargin` option, if set. */
  readonly safetyMargin: number | undefined;
  readonly clock: MonotonicClock;
  readonly observations: LockObservationCache;
  /** The client's polling loops, shared by its acquisitions waiting for the same lock. */
  readonly pollers: LockPollers;
  /** Whether the table is known to have this client's key schema, so that the new-lock write may go first. */
  readonly keySchema: KeySchemaProof;
  readonly logger: Logger | undefined;
  /** Maps errors about the table itself to typed errors. */
  readonly explain: (error: unknown) => Promise<unknown>;
  /** Holds acquisition requests back while the client's heartbeats are behind. */
  readonly gate: AcquisitionGate;
}

/** A successful acquisition write. */
export interface Acquisition {
  readonly record: LockRecordToWrite;
  /** Monotonic time just before the write was sent. */
  readonly lookupTime: number;
  /** Wall-clock time at `lookupTime`, where the clock has one. */
  readonly lookupWallTime: number | undefined;
  readonly additionalAttributes: LockItem;
  /** With fencing: the token this write gets if it commits, known before it is sent. */
  fencingToken?: bigint | undefined;
}

/** Checks everything about the call that can be checked without DynamoDB. */
export function validateAcquireOptions(
  ctx: Pick<AcquireContext, 'table' | 'heartbeatPeriod' | 'backgroundHeartbeats' | 'safetyMargin' | 'defaultLeaseDuration' | 'ownerName'>,
  key: LockKey, options: AcquireLockOptions): void {
  validateLockKey(ctx.table, key);
  if (options.refreshPeriod !== undefined) checkDuration('refreshPeriod', options.refreshPeriod);
  if (options.additionalTimeToWaitForLock !== undefined) {
    checkDuration('additionalTimeToWaitForLock', options.additionalTimeToWaitForLock, { allowInfinity: true });
  }
  const lease = options.leaseDuration === undefined ? ctx.defaultLeaseDuration : checkLockLease(options.leaseDuration, ctx);
  // The whole item is known but for the RVN (always 36 characters): check names and size before any call.
  validateItemSize(
    encodeLockItem(ctx.table, {
      ...key,
      ownerName: ctx.ownerName,
      leaseDurationMs: lease,
      recordVersionNumber: '00000000-0000-0000-0000-000000000000',
      data: toBytes(options.data),
      additionalAttributes: options.additionalAttributes ?? {},
    }),
  );
  const monitor = options.sessionMonitor;
  if (monitor !== undefined) {
    const safe = monitor.safeTimeWithoutHeartbeat;
    if (!(typeof safe === 'number' && safe > ctx.heartbeatPeriod && safe < lease)) {
      throw new InvalidArgumentError(
        'INVALID_SESSION_MONITOR',
        `sessionMonitor.safeTimeWithoutHeartbeat (${String(safe)} ms) must be greater than heartbeatPeriod (${ctx.heartbeatPeriod} ms) and less than the lease (${lease} ms)`,
      );
    }
  }
}

/** Thrown inside one iteration when that attempt failed but a later one may succeed before the deadline. */
class RetryableRefusal extends Error {
  constructor(readonly refusal: LockNotGrantedError) {
    super(refusal.message);
  }
}

/** What the loop acts on next. */
type Step =
  /** The first attempt: the new-lock write, no read before it (PROTOCOL.md §9.2 item 1). */
  | { readonly kind: 'create' }
  /** A consistent read of our own, then Java's decision. */
  | { readonly kind: 'read' }
  /** Java's decision on what a poll, or a refused write's ALL_OLD item, showed (`undefined`: no item). */
  | { readonly kind: 'decide'; readonly sighting: LockSighting | undefined; readonly at: number; readonly refused?: RefusedWrite }
  /** The timed RVN has been unchanged for its lease: write the takeover now, without a read. */
  | { readonly kind: 'takeover' }
  /** A poll failed; handled like a failed read of our own. */
  | { readonly kind: 'failed'; readonly error: unknown };

/** A write DynamoDB just refused, and the RVN of the item it was decided on. */
interface RefusedWrite {
  readonly path: AcquisitionPath['kind'];
  readonly recordVersionNumber: string | undefined;
}

/**
 * Acquires the lock: Java's acquire loop (PROTOCOL.md §5), with three
 * shortcuts that leave every request and every decision Java's:
 *
 * - A free lock is taken in one call: the new-lock write goes first, and
 *   when its condition fails, its ALL_OLD item is the consistent read Java
 *   would have made, so a released lock costs one more write, not a read.
 * - A refused write's ALL_OLD item is acted on at once instead of being read
 *   again after a refresh period.
 * - While waiting, a held lock's takeover is written at the instant its RVN
 *   has been unchanged for its lease, not at the next poll; polls (shared by
 *   the client's waiters for this lock) only notice heartbeats and releases.
 */
export async function acquire(ctx: AcquireContext, key: LockKey, options: AcquireLockOptions): Promise<Acquisition> {
  const { clock, table } = ctx;
  const signal = options.signal;
  const refreshMs = options.refreshPeriod ?? ACQUIRE_DEFAULTS.refreshPeriod;
  const leaseDurationMs = options.leaseDuration ?? ctx.defaultLeaseDuration;
  const replaceData = options.replaceData ?? ACQUIRE_DEFAULTS.replaceData;
  const id = lockId(key);
  const additionalAttributes = encodeAdditionalAttributes(options.additionalAttributes ?? {});
  const newData = toBytes(options.data);

  const deadline = new AcquireDeadline({
    clock,
    waitMs: options.additionalTimeToWaitForLock ?? ACQUIRE_DEFAULTS.additionalTimeToWaitForLock,
    graceMs: Math.max(refreshMs, leaseDurationMs),
    signal,
  });
  const watch = new StaleWatch();
  let lastHolder: LockHolder | undefined;
  /** Arrival time of the newest response acted on; older poll outcomes tell nothing new. */
  let newestAt = -Infinity;
  let polls: PollSubscription | undefined;
  /** This call's writes whose outcome is unknown: the table may hold any of them, and then the lock is ours. */
  const unconfirmed: Acquisition[] = [];
  const requestSignal = deadline.requestSignal;

  /** Writes `path`, unless it is the very write DynamoDB just refused on this same item. */
  const write = async (path: AcquisitionPath, existing: LockSighting | undefined, refused?: RefusedWrite): Promise<Acquisition> => {
    if (refused !== undefined && refused.path === path.kind && refused.recordVersionNumber === existing?.record.recordVersionNumber) {
      // Trying again at once would only be refused again: wait for the next poll, as Java waits a refresh period.
      throw new RetryableRefusal(new LockNotGrantedError('another client acquired it first', key, lastHolder));
    }
    const record: LockRecordToWrite = {
      ...key,
      ownerName: ctx.ownerName,
      leaseDurationMs,
      recordVersionNumber: randomUUID(),
      data: !replaceData && existing?.record.data !== undefined ? existing.record.data : newData,
      additionalAttributes: options.additionalAttributes ?? {},
    };
    return ctx.gate.run(() => writeLock(ctx, { record, path, options, additionalAttributes, unconfirmed, signal: requestSignal }), requestSignal);
  };

  /** Java's decision on one sighting of the lock (the body of its loop after the read). */
  const decide = async (existing: LockSighting | undefined, refused?: RefusedWrite): Promise<Acquisition | undefined> => {
    const ours = existing === undefined ? undefined : ourUnconfirmedWrite(existing.record, unconfirmed, ctx.ownerName);
    if (ours !== undefined) return ours;
    if (existing !== undefined) lastHolder = holderOf(existing.record);
    if (options.acquireOnlyIfLockAlreadyExists && existing === undefined) {
      throw new RetryableRefusal(new LockNotGrantedError('Lock does not exist.', key));
    }
    if (existing === undefined) return write({ kind: 'absent' }, existing, refused);
    const { record } = existing;
    if (record.isReleased) {
      const readRecordVersionNumber = options.acquireReleasedLocksConsistently ? record.recordVersionNumber : undefined;
      return write({ kind: 'released', readRecordVersionNumber }, existing, refused);
    }
    if (options.shouldSkipBlockingWait) {
      if (!ctx.observations.isStale(id, record.recordVersionNumber, record.leaseDurationMs)) {
        throw new LockCurrentlyUnavailableError(key, holderOf(record));
      }
      return write({ kind: 'expired', watchedRecordVersionNumber: record.recordVersionNumber }, existing, refused);
    }
    deadline.addHolderLease(record.leaseDurationMs);
    watch.observe(existing);
    return takeOverIfStale(refused);
  };

  const takeOverIfStale = async (refused?: RefusedWrite): Promise<Acquisition | undefined> => {
    const watched = watch.watched;
    if (watched === undefined || !watch.isStale(clock.now())) return undefined;
    const path: AcquisitionPath = { kind: 'expired', watchedRecordVersionNumber: watched.record.recordVersionNumber };
    return write(path, watched, refused);
  };

  /** Waits for the next poll, or for the takeover instant, whichever comes first. */
  const waitForNextStep = async (): Promise<Step> => {
    polls ??= ctx.pollers.subscribe(key, refreshMs);
    const outcome = await polls.next(watch.takeoverAt(), requestSignal);
    if (outcome === undefined) return { kind: 'takeover' };
    if (outcome.kind === 'error') return { kind: 'failed', error: outcome.error };
    ctx.keySchema.confirm();
    return { kind: 'decide', sighting: outcome.sighting, at: outcome.at };
  };

  // Java semantics for acquireOnlyIfLockAlreadyExists: read first, never create.
  let step: Step = options.acquireOnlyIfLockAlreadyExists || !ctx.keySchema.proven ? { kind: 'read' } : { kind: 'create' };
  try {
    for (;;) {
      signal?.throwIfAborted();
      let refusal: LockNotGrantedError | undefined;
      let following: Step | undefined;
      // The path of the write this step may send, for telling what a refusal refused.
      let attempted: RefusedWrite | undefined;
      try {
        let won: Acquisition | undefined;
        switch (step.kind) {
          case 'create':
            attempted = { path: 'absent', recordVersionNumber: undefined };
            won = await write({ kind: 'absent' }, undefined);
            break;
          case 'read': {
            const existing = await ctx.gate.run(() => ctx.requests.read(key, requestSignal), requestSignal);
            newestAt = clock.now();
            ctx.keySchema.confirm();
            attempted = intendedWrite(existing);
            won = await decide(existing);
            break;
          }
          case 'decide':
            if (step.at < newestAt) break; // a poll that arrived before what this call already knows
            newestAt = step.at;
            attempted = intendedWrite(step.sighting);
            won = await decide(step.sighting, step.refused);
            break;
          case 'takeover':
            attempted = { path: 'expired', recordVersionNumber: watch.watched?.record.recordVersionNumber };
            won = await takeOverIfStale();
            break;
          case 'failed':
            throw step.error;
        }
        if (won !== undefined) return won;
      } catch (error) {
        if (signal?.aborted) throw signal.reason;
        if (deadline.cutOff) throw new DynamoDBUnavailableError(key, error, lastHolder);
        if (error instanceof RetryableRefusal) {
          refusal = error.refusal;
        } else if (isConditionalCheckFailed(error)) {
          const arrivedAt = clock.now();
          const current = ctx.requests.sightingOfRefusal(error, arrivedAt);
          if (current !== undefined) lastHolder = holderOf(current.record);
          if (step.kind === 'create') {
            // Not a lost race: the lock exists. Its item is the read Java would have made first.
            step = current === undefined ? { kind: 'read' } : { kind: 'decide', sighting: current, at: arrivedAt };
            continue;
          }
          if (options.shouldSkipBlockingWait) throw new LockCurrentlyUnavailableError(key, lastHolder, { cause: error });
          refusal = new LockNotGrantedError('another client acquired it first', key, lastHolder, { cause: error });
          if (current !== undefined) following = { kind: 'decide', sighting: current, at: arrivedAt, refused: attempted };
        } else if (isTransactionRace(error)) {
          // A fenced acquisition lost a race without a word on the lock item: read it again.
          if (step.kind === 'create') {
            step = { kind: 'read' };
            continue;
          }
          refusal = new LockNotGrantedError('another write of the lock was under way', key, lastHolder, { cause: error });
        } else if (isThrottling(error) || isClientSideError(error) || (httpStatusOf(error) ?? 0) >= 500) {
          ctx.logger?.warn({ err: error, partitionKey: key.partitionKey, sortKey: key.sortKey }, 'lock acquisition attempt failed; retrying');
          refusal = new DynamoDBUnavailableError(key, error, lastHolder);
        } else if (isMalformedLockItemError(error) || error instanceof LockCurrentlyUnavailableError || error instanceof InvalidArgumentError) {
          throw error;
        } else {
          throw await ctx.explain(error);
        }
      }
      if (deadline.passed) {
        throw refusal ?? new LockNotGrantedError(`Didn't acquire lock after sleeping for ${Math.round(deadline.elapsed)} milliseconds`, key, lastHolder);
      }
      try {
        step = following ?? (await waitForNextStep());
      } catch (error) {
        if (signal?.aborted || !deadline.cutOff) throw error;
        // Past the deadline while a poll got no answer: as the lock was last answered, if DynamoDB answered at all.
        if (refusal !== undefined && !(refusal instanceof DynamoDBUnavailableError)) throw refusal;
        if (refusal === undefined && lastHolder !== undefined) {
          throw new LockNotGrantedError(`Didn't acquire lock after sleeping for ${Math.round(deadline.elapsed)} milliseconds`, key, lastHolder);
        }
        throw new DynamoDBUnavailableError(key, refusal?.cause ?? error, lastHolder);
      }
    }
  } finally {
    deadline[Symbol.dispose]();
    polls?.dispose();
  }
}

/** The write a decision on `existing` would send, if any, named for telling what a refusal refused. */
function intendedWrite(existing: LockSighting | undefined): RefusedWrite {
  if (existing === undefined) return { path: 'absent', recordVersionNumber: undefined };
  return { path: existing.record.isReleased ? 'released' : 'expired', recordVersionNumber: existing.record.recordVersionNumber };
}

/** The write of ours whose RVN the item carries, if the item is one this call wrote without learning so. */
function ourUnconfirmedWrite(record: LockRecord, unconfirmed: readonly Acquisition[], ownerName: string): Acquisition | undefined {
  if (record.ownerName !== ownerName || record.isReleased) return undefined;
  return unconfirmed.find((write) => write.record.recordVersionNumber === record.recordVersionNumber);
}

/**
 * Sends one acquisition write, asking for the current item should its
 * condition fail. A write whose outcome is unknown (no answer, cut off by
 * the signal, refused only after an SDK retry) joins `unconfirmed`; a
 * refusal that shows one of those writes in the table means it was applied.
 */
async function writeLock(
  ctx: AcquireContext,
  write: {
    readonly record: LockRecordToWrite;
    readonly path: AcquisitionPath;
    readonly options: AcquireLockOptions;
    readonly additionalAttributes: LockItem;
    readonly unconfirmed: Acquisition[];
    /** The caller's signal and the call's deadline. */
    readonly signal: AbortSignal;
  },
): Promise<Acquisition> {
  const { record, options, unconfirmed } = write;
  // Stamped before sending: the lease counts from the earliest moment the write can have taken effect.
  const acquisition: Acquisition = {
    record,
    lookupTime: ctx.clock.now(),
    lookupWallTime: ctx.clock.wallNow?.(),
    additionalAttributes: write.additionalAttributes,
  };
  try {
    const requestOptions = { updateExistingLockRecord: options.updateExistingLockRecord };
    await ctx.requests.write(record, write.path, requestOptions, write.signal, (token) => (acquisition.fencingToken = token));
  } catch (error) {
    const candidates = [acquisition, ...unconfirmed];
    const failed = classifyFailedWrite(error, {
      ownerName: ctx.ownerName,
      recordVersionNumbers: candidates.map((candidate) => candidate.record.recordVersionNumber),
    });
    if (failed.outcome === 'unknown') unconfirmed.push(acquisition);
    const applied = failed.outcome === 'applied' ? candidates.find((c) => c.record.recordVersionNumber === failed.recordVersionNumber) : undefined;
    if (applied === undefined) throw error;
    ctx.observations.forget(lockId(record));
    return applied;
  }
  ctx.observations.forget(lockId(record));
  return acquisition;
}
