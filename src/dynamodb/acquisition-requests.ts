/**
 * What an acquisition sends (PROTOCOL.md §4): the consistent read of the
 * lock, and the write that takes it, alone or, with fencing, in one
 * transaction with the step of the lock's fencing counter. Every write asks
 * for the item as it was should its condition fail, so that a refusal is
 * also a read of the lock. New-lock writes handed over together go out in
 * batches (new-lock-batches.ts). A write whose reply came late is renewed
 * with a heartbeat before the lock is handed over, through the heartbeats'
 * lane.
 */
import type { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import type { MonotonicClock } from '../base/clock.js';
import type { Logger } from '../base/logger.js';
import {
  buildAcquireRequest,
  buildGroupAcquisition,
  buildHeartbeatRequest,
  decodeLockItem,
  withOldItemOnConditionFailure,
  type AcquireRequestOptions,
  type AcquisitionPath,
  type GroupMember,
  type LockRecordToWrite,
  type LockTable,
} from '../protocol/index.js';
import type { LockKey } from '../base/lock-key.js';
import type { Departure } from './departure.js';
import type { LeaseRestatement } from './lease-restatement.js';
import { Fencing, sendTransaction } from './fencing-counter.js';
import { NewLockBatches } from './new-lock-batches.js';
import { readLock, type LockObservation } from './read-lock.js';
import { itemOfFailedCondition } from './sdk-errors.js';
import { sendWrite } from './send-write.js';

export interface AcquisitionRequestsOptions {
  readonly dynamoDB: Pick<DynamoDBClient, 'send'>;
  /**
   * What heartbeats go through (heartbeat-lane.ts): a renewal is the
   * heartbeat of a lock won, and waits neither for the acquisitions' sockets
   * nor in the rate limiter of their retry strategy.
   */
  readonly heartbeatDynamoDB: Pick<DynamoDBClient, 'send'>;
  readonly table: LockTable;
  readonly clock: MonotonicClock;
  /** The fencing table (client option `fencingTableName`); each acquisition write then steps its counter. */
  readonly fencingTable?: LockTable | undefined;
  /** Whether new-lock writes handed over together may go out in one batch call. */
  readonly batching: boolean;
  readonly logger: Logger | undefined;
  /** Whether each write stamps its wall-clock time beside its RVN (client option `clockBound`). */
  readonly stamping?: boolean | undefined;
}

export class AcquisitionRequests {
  readonly #dynamoDB: Pick<DynamoDBClient, 'send'>;
  readonly #heartbeatDynamoDB: Pick<DynamoDBClient, 'send'>;
  readonly #table: LockTable;
  readonly #clock: MonotonicClock;
  readonly #fencing: Fencing | undefined;
  readonly #newLocks: NewLockBatches;
  readonly #stamping: boolean;

  constructor(options: AcquisitionRequestsOptions) {
    this.#dynamoDB = options.dynamoDB;
    this.#heartbeatDynamoDB = options.heartbeatDynamoDB;
    this.#table = options.table;
    this.#clock = options.clock;
    this.#stamping = options.stamping === true;
    this.#fencing = options.fencingTable === undefined ? undefined : new Fencing(options.dynamoDB, options.fencingTable);
    this.#newLocks = new NewLockBatches({
      dynamoDB: options.dynamoDB,
      table: options.table,
      batching: options.batching,
      logger: options.logger,
    });
  }

  /** The lock as a consistent read finds it; `undefined` when there is no item. */
  read(key: LockKey, signal?: AbortSignal): Promise<LockObservation | undefined> {
    return readLock(this.#dynamoDB, this.#table, key, this.#clock, signal);
  }

  /**
   * Sends the write that takes the lock for `record` by `path`. With
   * fencing, `tokenChosen` learns the write's fencing token before anything
   * is sent, whatever the outcome. `departure` notes when the write first
   * left, where the lease it writes counts from; a bounded lock's
   * `restatement` states its lease again as each attempt leaves (never in
   * a batch of new locks).
   */
  async write(
    record: LockRecordToWrite,
    path: AcquisitionPath,
    options: AcquireRequestOptions,
    signal: AbortSignal,
    tokenChosen: (token: bigint) => void,
    departure: Departure,
    restatement?: LeaseRestatement,
  ): Promise<void> {
    const writtenAt = this.#writtenAt(departure);
    const request = withOldItemOnConditionFailure(buildAcquireRequest(this.#table, record, path, { ...options, writtenAt }));
    if (this.#fencing !== undefined) {
      await this.#fencing.send(request, record, tokenChosen, signal, departure, restatement);
    } else if (path.kind === 'absent' && request.operation === 'PutItem' && restatement === undefined) {
      await this.#newLocks.write(request, signal, departure);
    } else {
      await sendWrite(this.#dynamoDB, request, signal, departure, restatement);
    }
  }

  /**
   * Renews the lock `written` took with `renewal`'s RVN and lease, conditioned
   * on the RVN it wrote, as a heartbeat is: the lease counts from the
   * renewal's `departure` (a bounded lock's `restatement`: as in {@link write}).
   * Never fenced: the fencing token was `written`'s step.
   */
  async renew(
    written: LockRecordToWrite,
    renewal: Pick<LockRecordToWrite, 'recordVersionNumber' | 'leaseDurationMs'>,
    signal: AbortSignal,
    departure: Departure,
    restatement?: LeaseRestatement,
  ): Promise<void> {
    const heartbeat = buildHeartbeatRequest(this.#table, written, {
      newRecordVersionNumber: renewal.recordVersionNumber,
      leaseDurationMs: renewal.leaseDurationMs,
      refuseReleased: true,
      writtenAt: this.#writtenAt(departure),
    });
    await sendWrite(this.#heartbeatDynamoDB, withOldItemOnConditionFailure(heartbeat), signal, departure, restatement);
  }

  /**
   * Sends the transaction that takes every member of a group at once
   * (protocol/group-acquisition.ts), with a `ClientRequestToken` of its own.
   * With fencing, each member's counter is read first (`signal` bounds those
   * reads too), and `tokensChosen` learns the members' tokens before the
   * transaction is sent, whatever its outcome.
   */
  async writeGroup(
    members: readonly GroupMember[],
    signal: AbortSignal,
    tokensChosen: (tokens: readonly (bigint | undefined)[]) => void,
    departure: Departure,
  ): Promise<void> {
    const counters = this.#fencing;
    const fencing =
      counters === undefined
        ? undefined
        : { table: counters.table, seen: await Promise.all(members.map(({ record }) => counters.read(record, signal))) };
    const group = buildGroupAcquisition(this.#table, members, fencing, this.#writtenAt(departure));
    tokensChosen(group.tokens);
    await sendTransaction(this.#dynamoDB, group.items, signal, departure);
  }

  /** The wall-clock stamp of a write leaving with `departure`; none unless stamping. */
  #writtenAt(departure: Departure): number | undefined {
    return this.#stamping ? departure.stamp() : undefined;
  }

  /**
   * The lock as a refused write found it: its ALL_OLD item, timed from the
   * moment the refusal arrived. `undefined` when DynamoDB returned no item.
   * A malformed item throws, as a read of it would.
   */
  observationOfRefusal(error: unknown, arrivedAt: number): LockObservation | undefined {
    const item = itemOfFailedCondition(error);
    if (item === undefined) return undefined;
    return { record: decodeLockItem(this.#table, item), observedAt: arrivedAt };
  }
}
