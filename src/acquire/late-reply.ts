/**
 * The last step of every acquisition, single or group: what was won goes to
 * the caller. A lock's lease counts from when its write left, and a reply
 * held up (a socket queue, a busy server) may leave the caller little of
 * it, or none. Nobody can have taken the lock over while its RVN stayed
 * ours, and the caller has not acted on it yet, so when its first heartbeat
 * was already due as the answer arrived, a heartbeat conditioned on that RVN
 * renews it first, in place of the one the keeper would send at once.
 *
 * The renewal is optional. A renewal refused shows someone else's item
 * (the lock was taken over while the reply was late). Any other failure
 * changes nothing that was won: the lock goes on from the write before,
 * and no other renewal is sent. Each renewal gets half of the safe time
 * left (a heartbeat period when that is longer), so that its failure
 * leaves the other half to the caller; it goes apart from acquisitions
 * (acquisition-gate.ts), at once or not at all: it keeps a lock held, and
 * a lock not renewed here is renewed by its first heartbeat, due at once.
 * One answered late again is renewed again, at most {@link MOST_RENEWALS}
 * times in a row: a server that answers every write a heartbeat period
 * late could not keep the lock (no heartbeat would get through either).
 * Then, or when no safe time is left, the locks are released at once and
 * the call ends with {@link DynamoDBTooSlowError}, never leaving a lock in
 * the table that nobody holds.
 */
import type { MonotonicClock } from '../base/clock.js';
import { DynamoDBTooSlowError } from '../base/errors.js';
import type { LockKey } from '../base/lock-key.js';
import { deadline } from '../primitives/deadline.js';
import { safetyMarginFor } from '../settings/options.js';
import type { Acquisition, Renewal } from './steps.js';

export interface LateReplyContext {
  readonly clock: MonotonicClock;
  readonly heartbeatPeriod: number;
  /** The client's `safetyMargin` option, if set. */
  readonly safetyMargin: number | undefined;
  /** Releases, best effort, locks of this call that it will not hand over. */
  readonly releaseStray: (acquisitions: readonly Acquisition[]) => Promise<void>;
}

export type HandOver =
  | { readonly kind: 'handed'; readonly acquisitions: Acquisition[] }
  /** A renewal was refused: that lock is someone else's now (the others were released). */
  | { readonly kind: 'refused'; readonly error: unknown };

/**
 * Renewals in a row, each answered a heartbeat period or more after it
 * left, after which the server is taken to be slower than the period: a
 * lone late answer is common under load, three in a row are not.
 */
export const MOST_RENEWALS = 3;

/**
 * Hands `won` (one write, or a group's, all sent at once) over, renewing
 * each first when its reply came late. `renew` sends one renewal, cut
 * off when `bound` aborts; a rejection means it was never sent.
 * @throws DynamoDBTooSlowError when the locks could not be kept; they were released.
 */
export async function handOver(
  ctx: LateReplyContext,
  key: LockKey,
  won: readonly Acquisition[],
  renew: (acquisition: Acquisition, index: number, bound: AbortSignal) => Promise<Renewal>,
): Promise<HandOver> {
  let locks = [...won];
  let lateMs = locks.some((acquisition) => lateBy(ctx, acquisition) >= 0) ? roundTripOf(ctx, locks) : undefined;
  for (let renewals = 0; lateMs !== undefined; renewals++) {
    if (renewals === MOST_RENEWALS) return tooSlow(ctx, key, locks, lateMs);
    const round = await renewAll(ctx, locks, renew);
    if (round.kind === 'refused') return round;
    locks = round.locks;
    // A renewal that failed leaves what was won as it was: no other is sent.
    if (round.failed) break;
    lateMs = round.slowestMs >= ctx.heartbeatPeriod ? round.slowestMs : undefined;
  }
  const now = ctx.clock.now();
  if (locks.some((acquisition) => safeUntil(ctx, acquisition) <= now)) return tooSlow(ctx, key, locks, roundTripOf(ctx, locks));
  return { kind: 'handed', acquisitions: locks };
}

type RenewalRound =
  | { readonly kind: 'refused'; readonly error: unknown }
  /** `failed`: a renewal failed, its lock is the write before; `slowestMs`: the longest round trip of a confirmed renewal. */
  | { readonly kind: 'renewed'; readonly locks: Acquisition[]; readonly failed: boolean; readonly slowestMs: number };

/** Renews every lock at once; when one is refused, the others are released. */
async function renewAll(
  ctx: LateReplyContext,
  locks: readonly Acquisition[],
  renew: (acquisition: Acquisition, index: number, bound: AbortSignal) => Promise<Renewal>,
): Promise<RenewalRound> {
  const safeForMs = Math.min(...locks.map((acquisition) => safeUntil(ctx, acquisition))) - ctx.clock.now();
  // A renewal that fails leaves the caller the other half of what is left; a period, as any heartbeat gets, when little is.
  const bound = deadline(Math.max(safeForMs / 2, ctx.heartbeatPeriod));
  let answers: { readonly renewal: Renewal; readonly roundTripMs: number }[];
  try {
    answers = await Promise.all(
      locks.map(async (acquisition, i) => {
        const renewal = await renew(acquisition, i, bound.signal).catch((): Renewal => ({ kind: 'kept', acquisition }));
        return { renewal, roundTripMs: renewal.kind === 'renewed' ? ctx.clock.now() - renewal.acquisition.lookupTime : 0 };
      }),
    );
  } finally {
    bound.clear();
  }
  const kept = answers.flatMap(({ renewal }) => (renewal.kind === 'refused' ? [] : [renewal.acquisition]));
  const refused = answers.find(({ renewal }) => renewal.kind === 'refused')?.renewal;
  if (refused?.kind === 'refused') {
    await ctx.releaseStray(kept);
    return { kind: 'refused', error: refused.error };
  }
  return {
    kind: 'renewed',
    locks: kept,
    failed: answers.some(({ renewal }) => renewal.kind === 'kept'),
    slowestMs: Math.max(...answers.map(({ roundTripMs }) => roundTripMs)),
  };
}

/** Releases `locks`, which could not be kept, and ends the call saying how long the write took that showed it. */
async function tooSlow(ctx: LateReplyContext, key: LockKey, locks: readonly Acquisition[], roundTripMs: number): Promise<never> {
  await ctx.releaseStray(locks);
  throw new DynamoDBTooSlowError(key, roundTripMs, ctx.heartbeatPeriod);
}

/** Time since the oldest of `locks` left. */
function roundTripOf(ctx: LateReplyContext, locks: readonly Acquisition[]): number {
  return ctx.clock.now() - Math.min(...locks.map((acquisition) => acquisition.lookupTime));
}

/** How long past its first heartbeat's due time it is now; negative while not yet due. */
function lateBy(ctx: LateReplyContext, acquisition: Acquisition): number {
  return ctx.clock.now() - acquisition.lookupTime - ctx.heartbeatPeriod;
}

/** When the lock stops being safe to act on without a newer write, as the held lock will count it. */
function safeUntil(ctx: LateReplyContext, acquisition: Acquisition): number {
  const lease = acquisition.record.leaseDurationMs;
  return acquisition.lookupTime + lease - safetyMarginFor(lease, ctx);
}
