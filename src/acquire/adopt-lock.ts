/**
 * Adopting a lock another client handed off (`client.adoptLock`): the
 * handle is read and checked, then one conditional write on the handle's
 * owner name and RVN (dynamodb/adoption-write.ts) puts the adopter's owner
 * name, a new RVN and the adopter's lease in the item. The write won goes
 * to the held locks as an acquisition's does (acquirer.ts): from then on
 * the lock is held as any lock this client acquired.
 *
 * The lease counts from just before the adopting write was first sent, on
 * the adopter's own clock: how much of the handing-off client's lease was
 * left is unknowable without comparing clocks, and needed by nobody, since
 * a waiter times the RVN, which this write changes.
 */
import { randomUUID } from 'node:crypto';
import type { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import type { MonotonicClock } from '../base/clock.js';
import { DynamoDBUnavailableError, InvalidArgumentError, isDynamoDBLockError, LockHandOffError, type LockHolder } from '../base/errors.js';
import { writeAdoption, type AdoptionOutcome } from '../dynamodb/adoption-write.js';
import type { ReplicationCheck } from '../dynamodb/table-replication.js';
import { leaseEndOf, type InvocationDeadline, type LeaseEnd } from '../hold/lease-end.js';
import type { HoldTerms } from '../hold/lock-state.js';
import { boundedSignal } from '../primitives/bounded-signal.js';
import { holderOf } from '../protocol/lock-holder.js';
import {
  checkHandOffTable,
  decodeLockItem,
  encodeAdditionalAttributes,
  parseLockHandOff,
  validateLockKey,
  type AdoptionWriteOptions,
  type LockHandOff,
  type LockItem,
  type LockTable,
} from '../protocol/index.js';
import { checkSignal } from '../settings/argument-checks.js';
import { checkLockLease, safetyMarginFor, type ResolvedSettings } from '../settings/options.js';
import type { Acquisition } from './steps.js';

export interface AdoptLockOptions {
  /** The lease this client writes and keeps from now on, in ms. @default the client's `leaseDuration` */
  readonly leaseDuration?: number;
  /** @default as the lock was acquired (the handle's `deleteLockOnRelease`) */
  readonly deleteLockOnRelease?: boolean;
  /**
   * When the process adopting the lock will be stopped, as `acquireLock`'s
   * option: the adopting write and every heartbeat state a lease that ends
   * by then plus `killOverrunMs`, and the lock's safe time ends a safety
   * margin before. The handing-off process's deadline is never carried over:
   * it bounded that process only. @default none (leases are not bounded)
   */
  readonly invocationDeadline?: InvocationDeadline;
  /** Abandons the adoption; its outcome may then be unknown, and a lock adopted meanwhile lapses. */
  readonly signal?: AbortSignal;
}

/** Every option `adoptLock` takes, by name. */
export const ADOPT_LOCK_OPTION_NAMES: Readonly<Record<keyof AdoptLockOptions, true>> = {
  leaseDuration: true,
  deleteLockOnRelease: true,
  invocationDeadline: true,
  signal: true,
};

export interface AdoptionContext {
  readonly dynamoDB: Pick<DynamoDBClient, 'send'>;
  readonly table: LockTable;
  readonly settings: ResolvedSettings;
  readonly clock: MonotonicClock;
  readonly replication: ReplicationCheck | undefined;
  /** Aborted when the client closes. */
  readonly lifetime: AbortSignal;
}

/** Adopts the lock of `input` (a handle, or its JSON text): the write won and how to hold it, or a {@link LockHandOffError} saying why not. */
export async function adoptLock(
  ctx: AdoptionContext,
  input: unknown,
  options: AdoptLockOptions = {},
): Promise<{ readonly won: Acquisition; readonly terms: HoldTerms }> {
  const handle = parseLockHandOff(input);
  checkHandOffTable(handle, ctx.table);
  const key = { partitionKey: handle.partitionKey, sortKey: handle.sortKey };
  validateLockKey(ctx.table, key);
  const leaseDurationMs = options.leaseDuration === undefined ? ctx.settings.leaseDuration : checkLockLease(options.leaseDuration, ctx.settings);
  const deleteLockOnRelease = options.deleteLockOnRelease ?? handle.deleteLockOnRelease;
  if (typeof deleteLockOnRelease !== 'boolean')
    throw new InvalidArgumentError('INVALID_OPTION', 'adoptLock: deleteLockOnRelease must be true or false');
  const callerSignal = checkSignal('signal', options.signal);
  const now = ctx.clock.now();
  const given = options.invocationDeadline;
  const leaseEnd = given === undefined ? undefined : leaseEndOf(given, now, safetyMarginFor(leaseDurationMs, ctx.settings));
  // Unanswered for a lease, or until the safe time would end, the adoption is abandoned: what it did lapses, held by nobody.
  const boundMs = Math.min(leaseDurationMs, (leaseEnd?.safeUntil ?? Infinity) - now);
  const bound = boundedSignal(boundMs, AbortSignal.any(callerSignal === undefined ? [ctx.lifetime] : [ctx.lifetime, callerSignal]));
  try {
    const adopter = { ownerName: ctx.settings.ownerName, newRecordVersionNumber: randomUUID(), leaseDurationMs };
    const { outcome, lookupTime, lookupWallTime } = await send(ctx, handle, adopter, leaseEnd, bound.signal);
    if (outcome.outcome === 'refused') {
      const why = outcome.item === undefined ? 'its item is gone' : 'it has another owner, RVN or a released mark';
      throw new LockHandOffError('MOVED_ON', `the lock moved on since it was handed off: ${why}`, { holder: holderIn(ctx.table, outcome.item) });
    }
    const record = decodeLockItem(ctx.table, outcome.item);
    const additionalAttributes = encodeAdditionalAttributes(record.additionalAttributes);
    const fencingToken = handle.fencingToken === undefined ? undefined : BigInt(handle.fencingToken);
    return { won: { record, lookupTime, lookupWallTime, additionalAttributes, fencingToken }, terms: { deleteLockOnRelease, leaseEnd } };
  } finally {
    bound.dispose();
  }
}

/**
 * The table check (once per client) and the adopting write, timed from just
 * before it was first sent; bounded by `leaseEnd`, its lease ends by then (lease-end.ts).
 */
async function send(
  ctx: AdoptionContext,
  handle: LockHandOff,
  adopter: AdoptionWriteOptions,
  leaseEnd: LeaseEnd | undefined,
  signal: AbortSignal,
): Promise<{ outcome: AdoptionOutcome; lookupTime: number; lookupWallTime: number | undefined }> {
  try {
    if (ctx.replication?.passed === false) await ctx.replication.ensure(signal);
    const lookupTime = ctx.clock.now();
    const lookupWallTime = ctx.clock.wallNow?.();
    const asked = adopter.leaseDurationMs;
    const stated = { ...adopter, leaseDurationMs: leaseEnd?.leaseAt(asked, lookupTime) ?? asked };
    const outcome = await writeAdoption(ctx.dynamoDB, ctx.table, handle, stated, signal, leaseEnd?.restatement(asked, ctx.clock));
    return { outcome, lookupTime, lookupWallTime };
  } catch (error) {
    if (isDynamoDBLockError(error)) throw error;
    const reason = 'the adopting write failed; nothing is held (a write applied unseen lapses after its lease)';
    throw new DynamoDBUnavailableError({ partitionKey: handle.partitionKey, sortKey: handle.sortKey }, error, undefined, reason);
  }
}

/** Who holds the lock, as a refused adoption found it; none when it is gone or unreadable. */
function holderIn(table: LockTable, item: LockItem | undefined): LockHolder | undefined {
  try {
    return item === undefined ? undefined : holderOf(decodeLockItem(table, item));
  } catch {
    return undefined;
  }
}
