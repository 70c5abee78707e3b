/**
 * The one heartbeat writer: every heartbeat of a held lock, background or
 * manual, alone (UpdateItem, as Java sends it) or in a batch
 * (BatchExecuteStatement), is written here. It queues behind the lock's
 * other writes (its write queue), sends, sorts the outcome, and records it on the lock
 * (confirmed, in doubt, or lost). It reports to its caller only; it knows
 * nothing of the locks' registry or of scheduling.
 */
import type { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { randomUUID } from 'node:crypto';
import type { MonotonicClock } from '../base/clock.js';
import { sendStatementBatch, type StatementFailedError } from '../dynamodb/send-statement-batch.js';
import { sendWrite } from '../dynamodb/send-write.js';
import { attemptsOf, httpStatusOf, isConditionalCheckFailed, refusesPartiQL } from '../dynamodb/sdk-errors.js';
import { classifyFailedWrite } from '../dynamodb/write-outcome.js';
import { LockLostError } from '../base/errors.js';
import type { Logger } from '../base/logger.js';
import { RecentMinimum } from '../primitives/recent-minimum.js';
import {
  buildHeartbeatRequest,
  buildHeartbeatStatement,
  canBatchHeartbeats,
  withOldItemOnConditionFailure,
  type LockTable,
} from '../protocol/index.js';
import type { HeldLock } from '../hold/held-lock.js';
import type { LockWrite } from '../hold/lock-state.js';
import { loseByRefusal } from '../hold/loss.js';

/** What a heartbeat changes: the lease it writes, and data when a manual heartbeat sets or deletes it. */
export interface HeartbeatChange {
  /** The lease to write; none to keep the lease in force when the write starts. */
  readonly leaseDurationMs?: number | undefined;
  readonly data?: Uint8Array | undefined;
  readonly deleteData?: boolean | undefined;
}

/**
 * How a heartbeat ended:
 * - `confirmed`: the table holds its RVN;
 * - `kept`: not confirmed, but Java's `holdLockOnServiceUnavailable` counts the lease from now (a 503);
 * - `failed`: not confirmed, the lock is still held (a write of unknown outcome is remembered on it);
 * - `lost`: the lock has ended (refused, released meanwhile, or past its safe time);
 * - `unbatchable`: batches only: not sent, because the table refuses batches or the lock's safe time holds
 *   no batch and a lone retry after it; send it alone.
 */
export type HeartbeatResult =
  | { readonly outcome: 'confirmed' | 'kept' }
  | { readonly outcome: 'failed'; readonly error: unknown }
  | { readonly outcome: 'lost'; readonly error: LockLostError }
  | { readonly outcome: 'unbatchable' };

const CONFIRMED: HeartbeatResult = Object.freeze({ outcome: 'confirmed' });
const KEPT: HeartbeatResult = Object.freeze({ outcome: 'kept' });
const UNBATCHABLE: HeartbeatResult = Object.freeze({ outcome: 'unbatchable' });

export interface HeartbeatWriterOptions {
  readonly dynamoDB: Pick<DynamoDBClient, 'send'>;
  readonly table: LockTable;
  readonly clock: MonotonicClock;
  /** Whether to try batches at all (a batch size above 1 and a table batches can address). */
  readonly batching: boolean;
  /** Java's opt-in: a 503 counts as a confirmed heartbeat. */
  readonly holdLockOnServiceUnavailable: boolean;
  readonly logger: Logger | undefined;
  /** Whether each heartbeat stamps its wall-clock time beside its RVN (client option `clockBound`). */
  readonly stamping?: boolean | undefined;
  /** How long a quickest round trip stands for the usual one: it is forgotten one to two of these later. */
  readonly usualRoundTripWindowMs: number;
}

export class HeartbeatWriter {
  readonly #options: HeartbeatWriterOptions;
  /** Off for good once the table refuses a batch. */
  #batching: boolean;
  /** When each heartbeat request still awaiting its reply was sent, oldest first (a Set keeps insertion order). */
  readonly #unanswered = new Set<{ readonly sentAt: number }>();
  /** The quickest heartbeat round trip of late: what an answer takes when nothing of ours stands in its way. */
  readonly #usualRoundTrip: RecentMinimum;

  constructor(options: HeartbeatWriterOptions) {
    this.#options = options;
    this.#batching = options.batching && canBatchHeartbeats(options.table);
    this.#usualRoundTrip = new RecentMinimum(options.clock, options.usualRoundTripWindowMs);
  }

  /**
   * How much longer than the usual round trip the oldest heartbeat request
   * still unanswered has waited, in ms; 0 when none has. A reply later
   * than usual says the server (or the way to it) is busy, before any
   * heartbeat falls overdue. A reply that is always late (a distant
   * region) is the usual one, and says nothing of the kind.
   */
  unansweredLateMs(): number {
    const oldest = this.#unanswered.values().next();
    if (oldest.done === true) return 0;
    return Math.max(0, this.#options.clock.now() - oldest.value.sentAt - (this.#usualRoundTrip.value ?? 0));
  }

  /** Whether heartbeats may go out in batches (false once the table has refused one). */
  get batching(): boolean {
    return this.#batching;
  }

  /** One heartbeat of one lock, as an UpdateItem, queued behind the lock's other writes; `until` cuts it off. */
  write(held: HeldLock, change: HeartbeatChange, until: AbortSignal): Promise<HeartbeatResult> {
    return held.queueWrite(async () => {
      const notHeld = held.notHeldReason();
      if (notHeld !== undefined) return { outcome: 'lost', error: notHeld };
      const newRecordVersionNumber = randomUUID();
      // The lease in force now, when this write starts: not when it was queued behind one that changed it.
      const askedMs = change.leaseDurationMs ?? held.leaseDurationMs;
      const write = this.#lockWrite(held, newRecordVersionNumber, { ...change, leaseDurationMs: askedMs });
      const restatement = held.leaseEnd?.restatement(askedMs, this.#options.clock);
      const request = withOldItemOnConditionFailure(
        buildHeartbeatRequest(this.#options.table, held, {
          ...write,
          newRecordVersionNumber,
          refuseReleased: true,
          writtenAt: this.#writtenAt(write),
        }),
      );
      try {
        await held.unlessReleaseStarts(this.#timed(sendWrite(this.#options.dynamoDB, request, until, restatement)));
      } catch (error) {
        return this.#notConfirmed(held, write, error);
      }
      held.confirmWrite(write);
      return CONFIRMED;
    });
  }

  /**
   * The background heartbeats of several locks in one BatchExecuteStatement
   * call. Each lock's write still waits in that lock's write queue; the
   * call goes out once every lock's write has started (they were idle
   * when the batch was formed, so at once). Never throws.
   */
  async writeBatch(helds: readonly HeldLock[], until: AbortSignal): Promise<HeartbeatResult[]> {
    let statementsReady!: () => void;
    const allReady = new Promise<void>((resolve) => {
      statementsReady = resolve;
    });
    let send!: (reply: Promise<(StatementFailedError | undefined)[]>) => void;
    const reply = new Promise<(StatementFailedError | undefined)[]>((resolve) => {
      send = resolve;
    });
    const statements: ReturnType<typeof buildHeartbeatStatement>[] = [];
    let waiting = helds.length;
    const writeStarted = (): void => {
      waiting--;
      if (waiting === 0) statementsReady();
    };
    const results = helds.map((held) =>
      held.queueWrite(async (): Promise<HeartbeatResult> => {
        const notHeld = held.notHeldReason();
        if (notHeld !== undefined) {
          writeStarted();
          return { outcome: 'lost', error: notHeld };
        }
        const write = this.#lockWrite(held, randomUUID(), { leaseDurationMs: held.leaseDurationMs });
        let index: number;
        try {
          const statement = buildHeartbeatStatement(this.#options.table, held, {
            newRecordVersionNumber: write.recordVersionNumber,
            leaseDurationMs: write.leaseDurationMs,
            refuseReleased: true,
            writtenAt: this.#writtenAt(write),
          });
          index = statements.push(statement) - 1;
        } catch (error) {
          writeStarted();
          return { outcome: 'failed', error };
        }
        writeStarted();
        try {
          const failure = (await held.unlessReleaseStarts(reply))[index];
          if (failure !== undefined) throw failure;
        } catch (error) {
          if (this.#refusesBatches(error)) {
            // Refused as a whole; but after an SDK retry, an earlier attempt may have been applied.
            if (attemptsOf(error) !== 1) held.rememberUncertain(write);
            return UNBATCHABLE;
          }
          return this.#notConfirmed(held, write, error);
        }
        held.confirmWrite(write);
        return CONFIRMED;
      }),
    );
    await allReady;
    send(statements.length === 0 ? Promise.resolve([]) : this.#timed(sendStatementBatch(this.#options.dynamoDB, statements, until)));
    return Promise.all(results);
  }

  /** Counts `reply` among the unanswered requests until it settles. */
  async #timed<T>(reply: Promise<T>): Promise<T> {
    const entry = { sentAt: this.#options.clock.now() };
    this.#unanswered.add(entry);
    try {
      return await reply;
    } finally {
      this.#unanswered.delete(entry);
      this.#usualRoundTrip.add(this.#options.clock.now() - entry.sentAt);
    }
  }

  /**
   * Whether an error says that this table cannot take heartbeat batches (no
   * `dynamodb:PartiQLUpdate` permission, or a DynamoDB without PartiQL):
   * batching is then switched off for good, and nothing was applied.
   */
  #refusesBatches(error: unknown): boolean {
    const refused = refusesPartiQL(error);
    if (refused && this.#batching) {
      this.#batching = false;
      this.#options.logger?.warn({ err: error }, 'heartbeat batches were refused; sending one UpdateItem per heartbeat from now on');
    }
    return refused;
  }

  /**
   * A heartbeat of `held` about to be sent: its RVN, its change, and when it
   * left (the lease counts from then). A lock bounded by its holder's end
   * states a lease that ends by then, counted from this moment (lease-end.ts).
   */
  #lockWrite(held: HeldLock, recordVersionNumber: string, change: HeartbeatChange & { readonly leaseDurationMs: number }): LockWrite {
    const { clock } = this.#options;
    const sentAt = clock.now();
    const leaseDurationMs = held.leaseEnd?.leaseAt(change.leaseDurationMs, sentAt) ?? change.leaseDurationMs;
    return { ...change, leaseDurationMs, recordVersionNumber, sentAt, sentAtWall: clock.wallNow?.() };
  }

  /** The wall-clock stamp of `write` (read just after its lease's start); none unless stamping. */
  #writtenAt(write: LockWrite): number | undefined {
    if (this.#options.stamping !== true) return undefined;
    if (write.sentAtWall === undefined) throw new Error('a stamped heartbeat needs a clock with wallNow()');
    return write.sentAtWall;
  }

  /** A heartbeat's write did not succeed: sorts it by what it did to the table, and records that on the lock. */
  #notConfirmed(held: HeldLock, write: LockWrite, error: unknown): HeartbeatResult {
    const failed = classifyFailedWrite(error, { ownerName: held.ownerName, recordVersionNumbers: [write.recordVersionNumber] });
    switch (failed.outcome) {
      case 'applied':
        // An SDK retry refused by the write of its own first attempt.
        held.confirmWrite(write);
        return CONFIRMED;
      case 'refused':
        return { outcome: 'lost', error: loseByRefusal(this.#options.table, held, 'its heartbeat was refused', failed.item, error) };
      case 'unknown':
        // A retry's condition failed on a missing item: whatever an earlier attempt did (a heartbeat never
        // deletes), the item is gone now and the lock is free to anyone.
        if (isConditionalCheckFailed(error)) {
          return { outcome: 'lost', error: loseByRefusal(this.#options.table, held, 'its heartbeat was refused', undefined, error) };
        }
        // The table may hold this write: its RVN must be accepted, and its lease may be the one in force.
        held.rememberUncertain(write);
        break;
      case 'unapplied':
        break;
    }
    if (this.#options.holdLockOnServiceUnavailable && httpStatusOf(error) === 503) {
      // Java's opt-in: pretend the heartbeat worked although the RVN in the table may not have changed.
      held.keepWithoutConfirmation();
      return KEPT;
    }
    return { outcome: 'failed', error };
  }
}
