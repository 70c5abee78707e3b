/**
 * One `acquireLock` call: the acquire loop of the Java client (PROTOCOL.md
 * §5). It reads the lock consistently, takes it when it is absent or
 * released, and takes it over only after its RVN stayed unchanged for its
 * whole lease on this process's monotonic clock. Three shortcuts leave every
 * request and every decision Java's:
 *
 * - A free lock is taken in one call: the new-lock write goes first, and
 *   when its condition fails, its ALL_OLD item is the consistent read Java
 *   would have made, so a released lock costs one more write, not a read.
 * - A refused write's ALL_OLD item is acted on at once instead of being read
 *   again after a refresh period.
 * - While waiting, a held lock's takeover is written at the instant its RVN
 *   has been unchanged for its lease, not at the next poll; polls (shared by
 *   the client's waiters for this lock) only notice heartbeats and releases.
 *
 * Turns (turns.ts) change only when requests are sent: an acquisition that
 * stands aside waits until a refresh period after its client's release
 * before its first request.
 */
import {
  DynamoDBTooSlowError,
  DynamoDBUnavailableError,
  LockCurrentlyUnavailableError,
  LockNotGrantedError,
  type LockHolder,
} from '../base/errors.js';
import { lockId, type LockKey } from '../base/lock-key.js';
import { holderOf } from '../protocol/lock-holder.js';
import type { AcquisitionPath } from '../protocol/index.js';
import type { KeySchemaProof } from './key-schema-proof.js';
import type { AcquisitionGate, GateLane } from './acquisition-gate.js';
import type { LockPollers, PollSubscription } from './lock-poller.js';
import { AcquireDeadline } from './acquire-deadline.js';
import { admittedForCall } from './request-bound.js';
import { StaleWatch, type Watched } from './stale-watch.js';
import { LateTakeover } from './late-takeover.js';
import type { ClockBound } from './clock-bound.js';
import type { LockObservation } from '../dynamodb/read-lock.js';
import type { ReplicationCheck } from '../dynamodb/table-replication.js';
import type { TurnPlan } from './turns.js';
import type { ResolvedAcquireOptions } from './acquire-options.js';
import { intendedWrite, RetryableRefusal, type Acquisition, type Outcome, type RefusedWrite, type Step } from './steps.js';
import { decide, heldByAnother, type Decision } from './acquisition-rule.js';
import { AcquisitionWrites, type AcquisitionWritesContext } from './acquisition-writes.js';
import { outcomeOfFailure, type FailureContext } from './failed-step.js';
import { handOver, type LateReplyContext } from './late-reply.js';

/**
 * What one `acquireLock` call works with, each part by name: its writes'
 * (acquisition-writes.ts), its late reply's (late-reply.ts) and its failures'
 * (failed-step.ts), and the client's parts below. The acquirer (acquirer.ts)
 * shares them among the client's calls.
 */
export interface AcquireLoopParts extends AcquisitionWritesContext, LateReplyContext, Omit<FailureContext, 'requests'> {
  /** The client's polling loops, shared by its acquisitions waiting for the same lock. */
  readonly pollers: LockPollers;
  /** Whether the table is known to have this client's key schema, so that the new-lock write may go first. */
  readonly keySchema: KeySchemaProof;
  /** Holds acquisition requests back while the client's heartbeats are behind. */
  readonly gate: AcquisitionGate;
  /** The lock table's replication, checked before the client's first lock write; absent when the user opted out. */
  readonly replication: ReplicationCheck | undefined;
  /** The bounded-clock takeover (client option `clockBound`); absent when off. */
  readonly clockBound?: ClockBound | undefined;
}

export class AcquireLoop implements Disposable {
  readonly #ctx: AcquireLoopParts;
  readonly #key: LockKey;
  readonly #id: string;
  readonly #options: ResolvedAcquireOptions;
  readonly #refreshMs: number;
  readonly #leaseDurationMs: number;
  readonly #deadline: AcquireDeadline;
  readonly #watch: StaleWatch;
  readonly #writes: AcquisitionWrites;
  /** The holder the newest answer showed, named by the error the call may end with. */
  #lastHolder: LockHolder | undefined;
  /** Arrival time of the newest response acted on; older poll outcomes tell nothing new. */
  #newestAt = -Infinity;
  #polls: PollSubscription | undefined;
  /** Milliseconds before this call's first request: its client stands aside for waiters (turns.ts). */
  readonly #standAsideMs: number;
  #waitedForAnother = false;
  /** The takeover still sent once the wait has run out, if due (late-takeover.ts). */
  readonly #lateTakeover = new LateTakeover();

  /** `turn`: this client's turn on the lock, which may say to stand aside first (turns.ts). */
  constructor(ctx: AcquireLoopParts, key: LockKey, options: ResolvedAcquireOptions, turn?: Pick<TurnPlan, 'standAsideMs'>) {
    this.#standAsideMs = turn?.standAsideMs ?? 0;
    this.#ctx = ctx;
    this.#watch = new StaleWatch(ctx.clockBound);
    this.#key = key;
    this.#id = lockId(key);
    this.#options = options;
    this.#refreshMs = options.refreshPeriod;
    this.#leaseDurationMs = options.leaseDuration;
    this.#writes = new AcquisitionWrites(ctx, key, options);
    this.#deadline = new AcquireDeadline({
      clock: ctx.clock,
      waitMs: options.additionalTimeToWaitForLock,
      graceMs: Math.max(this.#refreshMs, this.#leaseDurationMs),
      signal: options.signal,
      oneRequestAtATime: true,
    });
  }

  /** Runs the loop until the lock is this call's, or the call ends with the reason it did not get it. */
  async run(): Promise<Acquisition> {
    let step: Step;
    if (this.#standAsideMs > 0) step = await this.#wait(undefined);
    // Java semantics for acquireOnlyIfLockAlreadyExists: read first, never create.
    else step = this.#options.acquireOnlyIfLockAlreadyExists || !this.#ctx.keySchema.proven ? { kind: 'read' } : { kind: 'create' };
    for (;;) {
      this.#options.signal?.throwIfAborted();
      const outcome = await this.#take(step);
      if (outcome.kind === 'won') return outcome.acquisition;
      if (outcome.kind === 'again') {
        step = outcome.step;
        continue;
      }
      if (this.#deadline.passed) {
        if (this.#lateTakeover.claim(this.#deadline, [this.#watch], this.#ctx.clock.now())) {
          step = { kind: 'takeover' };
          continue;
        }
        throw outcome.refusal ?? this.#notAcquired();
      }
      step = outcome.following ?? (await this.#wait(outcome.refusal));
    }
  }

  /**
   * Java's decision on one observation of the lock (`undefined`: no item),
   * the body of its loop after the read (acquisition-rule.ts); sends nothing.
   * `refused` is the write DynamoDB just refused, which is not sent again on
   * the same item.
   */
  judge(existing: LockObservation | undefined, refused?: RefusedWrite): Decision {
    const ours = existing === undefined ? undefined : this.#writes.writtenAs(existing.record);
    if (existing !== undefined && ours === undefined) {
      this.#lastHolder = holderOf(existing.record);
      if (heldByAnother(existing, this.#ctx.ownerName)) this.#waitedForAnother = true;
    }
    const watched = ours === undefined ? this.#watched(existing) : undefined;
    return decide({ existing, ours, refused, watched }, this.#options);
  }

  /** Whether this call saw someone else hold the lock. */
  get waitedForAnother(): boolean {
    return this.#waitedForAnother;
  }

  [Symbol.dispose](): void {
    this.#deadline[Symbol.dispose]();
    this.#polls?.dispose();
  }

  /** What says whether a held lock is stale: the stale watch, or, never waiting, what earlier calls saw (observation-cache.ts). */
  #watched(existing: LockObservation | undefined): Watched | undefined {
    if (this.#options.shouldSkipBlockingWait && existing !== undefined && !existing.record.isReleased) {
      const { record } = existing;
      const stale =
        this.#ctx.observations.isStale(this.#id, record.recordVersionNumber, record.leaseDurationMs) ||
        (this.#ctx.clockBound?.provesExpired(record) ?? false);
      return { observation: existing, stale };
    }
    const watched = this.#watch.take(existing, this.#ctx.clock.now());
    if (watched !== undefined) this.#deadline.addHolderLease(watched.observation.record.leaseDurationMs);
    return watched;
  }

  /** One step; a failure becomes the outcome it stands for, or ends the call. */
  async #take(step: Step): Promise<Outcome> {
    // The write this step may send, for telling what a refusal refused.
    let attempted: RefusedWrite | undefined;
    try {
      let won: Acquisition | undefined;
      // Before any step that may write; failing transiently, it is tried again within the call's wait.
      if (step.kind !== 'failed' && this.#ctx.replication?.passed === false) await this.#ctx.replication.ensure(this.#deadline.requestSignal);
      switch (step.kind) {
        case 'create':
          attempted = { path: 'absent', recordVersionNumber: undefined };
          won = await this.#write({ kind: 'absent' }, undefined);
          break;
        case 'read': {
          const existing = await this.#read();
          attempted = intendedWrite(existing);
          won = await this.#act(this.judge(existing));
          break;
        }
        case 'decide':
          if (step.at < this.#newestAt) break; // a poll that arrived before what this call already knows
          this.#newestAt = step.at;
          attempted = intendedWrite(step.observation);
          won = await this.#act(this.judge(step.observation, step.refused));
          break;
        case 'takeover': {
          // The timed RVN has stood still for its lease: decided as a read showing it again would be.
          const timed = this.#watch.observation;
          attempted = { path: 'expired', recordVersionNumber: timed?.record.recordVersionNumber };
          if (timed === undefined) break;
          const watched = this.#watch.take(timed, this.#ctx.clock.now());
          won = await this.#act(decide({ existing: timed, watched }, this.#options));
          break;
        }
        case 'failed':
          throw step.error;
      }
      if (won === undefined) return { kind: 'not-taken' };
      // A refused renewal refused no write of the loop's own: its item is acted on as any refusal's.
      attempted = undefined;
      return { kind: 'won', acquisition: await this.#handOver(won) };
    } catch (error) {
      if (error instanceof DynamoDBTooSlowError) throw error;
      return this.#afterFailure(error, step, attempted);
    }
  }

  /** The lock as it goes to the caller, renewed first if its reply came late (late-reply.ts); throws a refused renewal's error. */
  async #handOver(won: Acquisition): Promise<Acquisition> {
    const renew = (acquisition: Acquisition, _: number, bound: AbortSignal) =>
      this.#admitted((signal) => this.#writes.renew(acquisition, AbortSignal.any([signal, bound])), 'renewal');
    const handed = await handOver(this.#ctx, this.#key, [won], renew);
    if (handed.kind === 'refused') throw handed.error;
    return handed.acquisitions[0] as Acquisition;
  }

  /** A consistent read of our own, through the gate (heartbeats first). */
  async #read(): Promise<LockObservation | undefined> {
    const existing = await this.#admitted((signal) => this.#ctx.requests.read(this.#key, signal));
    this.#newestAt = this.#ctx.clock.now();
    this.#ctx.keySchema.confirm();
    return existing;
  }

  /**
   * Runs a request once the gate lets it through (heartbeats first, a bounded
   * number in flight). The wait to be admitted counts against the call's
   * deadline only while the queue stands still (acquire-deadline.ts). The
   * request follows the call's cut-off, and is abandoned once unanswered for
   * the request bound (request-bound.ts), also when the call has no deadline.
   */
  #admitted<T>(request: (signal: AbortSignal) => Promise<T>, lane?: GateLane): Promise<T> {
    return admittedForCall(this.#ctx.gate, this.#deadline, this.#requestBoundMs, request, lane);
  }

  /** A request unanswered this long is abandoned: the cut-off's grace, a lease (or a refresh period if longer). */
  get #requestBoundMs(): number {
    return Math.max(this.#refreshMs, this.#leaseDurationMs);
  }

  async #act(decision: Decision): Promise<Acquisition | undefined> {
    switch (decision.kind) {
      case 'ours':
        return decision.acquisition;
      case 'write':
        return this.#write(decision.path, decision.existing);
      case 'wait':
        return undefined;
      case 'retry':
        throw new RetryableRefusal(
          decision.why === 'no-item'
            ? new LockNotGrantedError('Lock does not exist.', this.#key)
            : new LockNotGrantedError('another client acquired it first', this.#key, this.#lastHolder),
        );
      case 'unavailable':
        throw new LockCurrentlyUnavailableError(this.#key, this.#lastHolder);
    }
  }

  /** Writes `path`, decided on `existing`, through the gate (heartbeats first). */
  async #write(path: AcquisitionPath, existing: LockObservation | undefined): Promise<Acquisition> {
    const record = this.#writes.recordFor(existing);
    if (path.kind === 'expired') this.#lateTakeover.sent();
    return this.#admitted((signal) => this.#writes.send(record, path, signal));
  }

  /** Sorts a failed step (failed-step.ts); the holder its refusal shows becomes the one the call's error names. */
  #afterFailure(error: unknown, step: Step, attempted: RefusedWrite | undefined): Promise<Outcome> {
    return outcomeOfFailure(error, step, attempted, {
      ctx: this.#ctx,
      key: this.#key,
      options: this.#options,
      cutOff: this.#deadline.cutOff,
      lastHolder: () => this.#lastHolder,
      sawHolder: (holder) => (this.#lastHolder = holder),
    });
  }

  /**
   * Waits for the next poll, or for the takeover instant, whichever comes
   * first. `refusal`: why the last step did not take the lock.
   */
  async #wait(refusal: LockNotGrantedError | undefined): Promise<Step> {
    try {
      this.#polls ??= this.#ctx.pollers.subscribe(this.#key, this.#refreshMs, this.#standAsideMs > 0 ? this.#standAsideMs : undefined);
      const outcome = await this.#polls.next(this.#watch.takeoverAt(), this.#deadline.requestSignal);
      if (outcome === undefined) return { kind: 'takeover' };
      if (outcome.kind === 'error') return { kind: 'failed', error: outcome.error };
      this.#ctx.keySchema.confirm();
      return { kind: 'decide', observation: outcome.observation, at: outcome.at };
    } catch (error) {
      if (this.#options.signal?.aborted || !this.#deadline.cutOff) throw error;
      // Past the deadline while a poll got no answer: as the lock was last answered, if DynamoDB answered at all.
      if (refusal !== undefined && !(refusal instanceof DynamoDBUnavailableError)) throw refusal;
      if (refusal === undefined && this.#lastHolder !== undefined) throw this.#notAcquired();
      throw new DynamoDBUnavailableError(this.#key, refusal?.cause ?? error, this.#lastHolder);
    }
  }

  #notAcquired(): LockNotGrantedError {
    const waited = Math.round(this.#deadline.elapsed);
    return new LockNotGrantedError(`Didn't acquire lock after sleeping for ${waited} milliseconds`, this.#key, this.#lastHolder);
  }
}
