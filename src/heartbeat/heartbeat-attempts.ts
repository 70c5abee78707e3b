/**
 * One heartbeat attempt: of one lock (Java's UpdateItem) or of several locks
 * due together (one batch, one concurrency slot). It bounds the attempt by
 * the safe time of its locks (a batch's leaves each lock a lone retry
 * where lone heartbeats are much quicker), learns from answered attempts how long a heartbeat takes, and
 * gives up, rather than sends, a lock with less safe time left than that.
 * It tells each lock's result and acts on none of them: the keeper does.
 */
import type { MonotonicClock } from '../base/clock.js';
import type { HeldLock } from '../hold/held-lock.js';
import { tooLateToHeartbeat } from '../hold/loss.js';
import { HeartbeatBatchPace } from './heartbeat-batch-pace.js';
import { LONE_QUICKER_RATIO, attemptBoundMs, batchAttemptBoundMs } from './heartbeat-tuning.js';
import type { HeartbeatResult, HeartbeatWriter } from './heartbeat-writer.js';
import { RoundTripEstimate } from './round-trip-estimate.js';
import { SharedDeadlines } from './shared-deadlines.js';

export interface HeartbeatAttemptsOptions {
  readonly writer: HeartbeatWriter;
  readonly clock: MonotonicClock;
  readonly heartbeatPeriod: number;
  readonly heartbeatBatchSize: number;
  /** How long the most overdue heartbeat not yet sent has waited, in ms (the scheduler's). */
  readonly overdueMs: () => number;
}

const answered = (result: HeartbeatResult): boolean => result.outcome === 'confirmed' || result.outcome === 'kept';

export class HeartbeatAttempts {
  readonly #options: HeartbeatAttemptsOptions;
  readonly #deadlines: SharedDeadlines;
  readonly #roundTrip: RoundTripEstimate;
  /** Apart from single heartbeats: a batch takes longer, and would make a lone heartbeat look slower than it is. */
  readonly #batchPace: HeartbeatBatchPace;

  constructor(options: HeartbeatAttemptsOptions) {
    this.#options = options;
    this.#deadlines = new SharedDeadlines(options.clock);
    // A heartbeat is due again a period after it was sent: a longer reply is rare, and most likely this process's doing.
    this.#roundTrip = new RoundTripEstimate(options.heartbeatPeriod);
    this.#batchPace = new HeartbeatBatchPace(options.heartbeatBatchSize, options.heartbeatPeriod, options.clock);
  }

  /** Most heartbeats in the next batch. */
  get batchSize(): number {
    return this.#batchPace.size;
  }

  /** What a slow lone heartbeat took of late, in ms: what its retry should be given. */
  slowRoundTripMs(): number {
    return this.#roundTrip.slow();
  }

  /** One lock's heartbeat, alone. */
  async single(held: HeldLock): Promise<HeartbeatResult> {
    const { clock, writer } = this.#options;
    const roundTrip = this.#roundTrip.estimate();
    const safeFor = held.safeTimeLeft();
    if (safeFor < roundTrip) return { outcome: 'lost', error: held.expire(tooLateToHeartbeat(safeFor, roundTrip)) };
    const attempt = this.#deadlines.deadline(attemptBoundMs(this.#options.heartbeatPeriod, safeFor, this.#roundTrip.slow()));
    const sentAt = clock.now();
    let result: HeartbeatResult;
    try {
      result = await writer.write(held, {}, attempt.signal);
    } catch (error) {
      // Not expected; but a lock left without a scheduled heartbeat would only ever expire.
      result = { outcome: 'failed', error };
    } finally {
      attempt.clear();
    }
    if (answered(result)) this.#roundTrip.add(clock.now() - sentAt);
    return result;
  }

  /**
   * The heartbeats of several due locks in one request, a result for each,
   * in their order. Where lone heartbeats are much quicker than batches, a
   * lock whose safe time does not hold a batch's usual round trip and a
   * lone retry after it goes alone (`unbatchable`), and the batch's attempt
   * leaves each lock that retry's room; elsewhere a lock with less safe
   * time than a batch takes is given up, and the attempt may take all of
   * it. When only one is left, it goes alone, as Java's UpdateItem.
   */
  async batch(helds: readonly HeldLock[]): Promise<HeartbeatResult[]> {
    const { clock, writer, heartbeatPeriod } = this.#options;
    const startedAt = clock.now();
    const roundTrip = this.#batchPace.roundTrip.estimate();
    const slowLone = this.#roundTrip.slow();
    const loneIsQuicker = this.#roundTrip.estimate() * LONE_QUICKER_RATIO < roundTrip;
    const results: HeartbeatResult[] = [];
    const sent: number[] = [];
    let safeFor = Infinity;
    helds.forEach((held, i) => {
      const safe = held.safeTimeLeft();
      if (loneIsQuicker && batchAttemptBoundMs(heartbeatPeriod, safe, slowLone) < roundTrip) {
        results[i] = { outcome: 'unbatchable' };
        return;
      }
      if (safe < roundTrip) {
        results[i] = { outcome: 'lost', error: held.expire(tooLateToHeartbeat(safe, roundTrip)) };
        return;
      }
      sent.push(i);
      safeFor = Math.min(safeFor, safe);
    });
    const locks = sent.map((i) => helds[i] as HeldLock);
    if (locks.length <= 1) {
      if (locks[0] !== undefined) results[sent[0] as number] = await this.single(locks[0]);
      return results;
    }
    const boundMs = loneIsQuicker
      ? batchAttemptBoundMs(heartbeatPeriod, safeFor, slowLone)
      : attemptBoundMs(heartbeatPeriod, safeFor, this.#batchPace.roundTrip.slow());
    const attempt = this.#deadlines.deadline(boundMs);
    this.#batchPace.sending(locks.length);
    let replies: HeartbeatResult[];
    try {
      replies = await writer.writeBatch(locks, attempt.signal);
    } catch (error) {
      replies = locks.map(() => ({ outcome: 'failed', error }));
    } finally {
      attempt.clear();
    }
    // Only an answered batch tells how long a heartbeat takes; a failed one may have waited out its whole deadline.
    if (replies.some(answered)) this.#batchPace.answered(locks.length, clock.now() - startedAt, this.#options.overdueMs());
    else if (attempt.signal.aborted) this.#batchPace.unanswered(locks.length);
    // A reply missing from the writer's answer is not known to have been sent: it goes again alone.
    sent.forEach((index, i) => (results[index] = replies[i] ?? { outcome: 'unbatchable' }));
    return results;
  }
}
