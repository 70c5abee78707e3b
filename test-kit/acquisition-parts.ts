/**
 * The parts of an acquisition (src/acquire/acquisition-parts.ts) for unit
 * tests that drive an acquire loop without a `LockClient`: one owner, a gate
 * that never holds a request back, no replication check, no logger. And the
 * observations those tests judge.
 */
import type { AcquisitionParts } from '../src/acquire/acquisition-parts.js';
import type { LateReplyContext } from '../src/acquire/late-reply.js';
import { AcquisitionGate } from '../src/acquire/acquisition-gate.js';
import { KeySchemaProof } from '../src/acquire/key-schema-proof.js';
import { LockPollers } from '../src/acquire/lock-poller.js';
import { LockObservationCache } from '../src/acquire/observation-cache.js';
import { Turns } from '../src/acquire/turns.js';
import type { MonotonicClock } from '../src/base/clock.js';
import { AcquisitionRequests } from '../src/dynamodb/acquisition-requests.js';
import { sdkClientOf } from '../src/dynamodb/dynamodb-sender.js';
import type { LockObservation } from '../src/dynamodb/read-lock.js';
import type { LockRecord, LockTable } from '../src/protocol/index.js';
import type { DynamoDBSender } from '../src/settings/options.js';

export interface UnitAcquisitionParts {
  readonly table: LockTable;
  readonly clock: MonotonicClock;
  readonly dynamoDB: DynamoDBSender;
  readonly leaseDurationMs: number;
  readonly heartbeatPeriodMs: number;
  /** Polls read through the context's own requests; without, a poll fails the test. */
  readonly polls?: boolean;
  /** Poll delays are drawn from this. @default Math.random */
  readonly random?: () => number;
  readonly observations?: LockObservationCache;
  readonly turns?: Turns;
}

export function unitAcquisitionParts(options: UnitAcquisitionParts): AcquisitionParts & LateReplyContext {
  const { table, clock } = options;
  const dynamoDB = sdkClientOf(options.dynamoDB);
  // One sender for both: unit tests script every request in order, heartbeats' lane or not.
  const requests = new AcquisitionRequests({ dynamoDB, heartbeatDynamoDB: dynamoDB, table, clock, batching: false, logger: undefined });
  return {
    requests,
    table,
    ownerName: 'me',
    defaultLeaseDuration: options.leaseDurationMs,
    heartbeatPeriod: options.heartbeatPeriodMs,
    backgroundHeartbeats: true,
    safetyMargin: undefined,
    clock,
    observations: options.observations ?? new LockObservationCache(10, clock),
    pollers: new LockPollers({
      clock,
      read: options.polls === true ? (key, signal) => requests.read(key, signal) : () => Promise.reject(new Error('this test polls nothing')),
      // Left out when not given: an explicit undefined would replace the pollers' default.
      ...(options.random === undefined ? {} : { random: options.random }),
    }),
    keySchema: new KeySchemaProof(table),
    logger: undefined,
    explain: (error) => Promise.resolve(error),
    gate: new AcquisitionGate({
      heartbeatsBehind: () => false,
      heartbeatsOverdue: () => false,
      limit: 10,
      limitWhileBehind: 1,
      pollPatienceMs: 1_000,
      renewalLimit: 10,
    }),
    turns: options.turns ?? new Turns(clock, 10),
    replication: undefined,
    clockBound: undefined,
    releaseStray: () => Promise.resolve(),
  };
}

/** An observation at `observedAt` of lock `k` held by `other` with RVN `rvn-1` and `leaseDurationMs`, but for `fields`. */
export function lockObservation(observedAt: number, leaseDurationMs: number, fields: Partial<LockRecord> = {}): LockObservation {
  return {
    record: {
      partitionKey: 'k',
      ownerName: 'other',
      leaseDurationMs,
      recordVersionNumber: 'rvn-1',
      isReleased: false,
      data: undefined,
      additionalAttributes: {},
      ...fields,
    },
    observedAt,
  };
}
