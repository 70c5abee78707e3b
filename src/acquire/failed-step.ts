/**
 * What a failed step of an acquisition (acquire-lock.ts) comes to: a refusal
 * whose ALL_OLD item is the next thing to act on, a reason to try again
 * before the deadline, or the end of the call with a typed error.
 */
import { DynamoDBUnavailableError, LockCurrentlyUnavailableError, LockNotGrantedError, type LockHolder } from '../base/errors.js';
import type { LockKey } from '../base/lock-key.js';
import { holderOf } from '../protocol/lock-holder.js';
import type { MonotonicClock } from '../base/clock.js';
import type { Logger } from '../base/logger.js';
import type { AcquisitionRequests } from '../dynamodb/acquisition-requests.js';
import type { AcquireLockOptions } from './acquire-options.js';
import { RetryableRefusal, type Outcome, type RefusedWrite, type Step } from './steps.js';
import { kindOfFailure } from './failure-kind.js';

/** What sorting a failed step takes of the client's parts. */
export interface FailureContext {
  readonly clock: MonotonicClock;
  readonly requests: Pick<AcquisitionRequests, 'observationOfRefusal'>;
  readonly logger: Logger | undefined;
  /** Maps errors about the table itself to typed errors. */
  readonly explain: (error: unknown) => Promise<unknown>;
}

/** The call whose step failed. */
export interface FailedCall {
  readonly ctx: FailureContext;
  readonly key: LockKey;
  readonly options: AcquireLockOptions;
  /** The call's deadline has cut its requests off. */
  readonly cutOff: boolean;
  /** The holder the newest answer showed. */
  lastHolder(): LockHolder | undefined;
  /** A refusal showed this holder. */
  sawHolder(holder: LockHolder): void;
}

/** Sorts a failed step: a refusal to act on, a reason to try again later, or the end of the call. */
export async function outcomeOfFailure(error: unknown, step: Step, attempted: RefusedWrite | undefined, call: FailedCall): Promise<Outcome> {
  const { ctx, key, options } = call;
  const signal = options.signal;
  if (signal?.aborted) throw signal.reason;
  if (call.cutOff) throw new DynamoDBUnavailableError(key, error, call.lastHolder());
  if (error instanceof RetryableRefusal) return { kind: 'not-taken', refusal: error.refusal };
  const kind = kindOfFailure(error, 'one');
  if (kind === 'refused') {
    const arrivedAt = ctx.clock.now();
    const current = ctx.requests.observationOfRefusal(error, arrivedAt);
    if (current !== undefined) call.sawHolder(holderOf(current.record));
    if (step.kind === 'create') {
      // Not a lost race: the lock exists. Its item is the read Java would have made first.
      return { kind: 'again', step: current === undefined ? { kind: 'read' } : { kind: 'decide', observation: current, at: arrivedAt } };
    }
    if (current === undefined && attempted !== undefined && attempted.path !== 'absent') {
      // A write conditioned on an item, refused without one: the item is gone. That is a read of "no item".
      return { kind: 'again', step: { kind: 'decide', observation: undefined, at: arrivedAt, refused: attempted } };
    }
    if (options.shouldSkipBlockingWait) {
      // A refusal without the item (a batch's `DuplicateItem`) names no holder, and may be our own write
      // applied by an earlier attempt: read it, as the refusal of a PutItem would have shown it.
      if (current === undefined) return { kind: 'again', step: { kind: 'read' } };
      throw new LockCurrentlyUnavailableError(key, call.lastHolder(), { cause: error });
    }
    return {
      kind: 'not-taken',
      refusal: new LockNotGrantedError('another client acquired it first', key, call.lastHolder(), { cause: error }),
      following: current === undefined ? undefined : { kind: 'decide', observation: current, at: arrivedAt, refused: attempted },
    };
  }
  if (kind === 'race') {
    // A fenced acquisition lost a race without a word on the lock item, or a transaction holds the item: read it again.
    if (step.kind === 'create') return { kind: 'again', step: { kind: 'read' } };
    return {
      kind: 'not-taken',
      refusal: new LockNotGrantedError('another write of the lock was under way', key, call.lastHolder(), { cause: error }),
    };
  }
  if (kind === 'transient') {
    ctx.logger?.warn({ err: error, partitionKey: key.partitionKey, sortKey: key.sortKey }, 'lock acquisition attempt failed; retrying');
    return { kind: 'not-taken', refusal: new DynamoDBUnavailableError(key, error, call.lastHolder()) };
  }
  throw kind === 'final' ? error : await ctx.explain(error);
}
