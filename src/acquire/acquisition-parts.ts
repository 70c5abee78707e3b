/**
 * What the acquisitions of one client share, built once per client: the
 * settings an acquisition follows, the acquisition requests, the observation
 * cache, the polling loops, the key-schema proof, the gate, the turns and the
 * bounded-clock takeover. The acquirer (acquirer.ts) owns them; each loop
 * takes the parts it names (`AcquireLoopParts`, `GroupAcquireParts`).
 */
import type { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import type { MonotonicClock } from '../base/clock.js';
import type { Logger } from '../base/logger.js';
import { AcquisitionRequests } from '../dynamodb/acquisition-requests.js';
import { explainTableError } from '../dynamodb/lock-table.js';
import type { ReplicationCheck } from '../dynamodb/table-replication.js';
import type { HeldLocks } from '../heartbeat/held-locks.js';
import type { LockTable } from '../protocol/index.js';
import type { ResolvedSettings } from '../settings/options.js';
import type { AcquireSettings } from './acquire-options.js';
import {
  ACQUISITION_REQUESTS_IN_FLIGHT,
  ACQUISITIONS_WHILE_BEHIND_SHARE,
  AcquisitionGate,
  RENEWALS_SHARE_OF_HEARTBEAT_CONCURRENCY,
} from './acquisition-gate.js';
import { ClockBound } from './clock-bound.js';
import { KeySchemaProof } from './key-schema-proof.js';
import { LockPollers } from './lock-poller.js';
import { LockObservationCache } from './observation-cache.js';
import { admittedWithinBound } from './request-bound.js';
import { REMEMBERED_TURNS, Turns } from './turns.js';

export interface AcquisitionPartsOptions {
  readonly dynamoDB: Pick<DynamoDBClient, 'send'>;
  /** The heartbeats' lane (heartbeat-lane.ts), which a late win's renewal takes: it keeps a lock held. */
  readonly heartbeatDynamoDB: Pick<DynamoDBClient, 'send'>;
  readonly table: LockTable;
  /** The fencing table (`fencingTableName`), with the lock table's key names. */
  readonly fencingTable: LockTable | undefined;
  readonly settings: ResolvedSettings;
  readonly clock: MonotonicClock;
  readonly logger: Logger | undefined;
  /** Checked before the client's first lock write; absent when the user opted out. */
  readonly replication: ReplicationCheck | undefined;
  /** Where acquired locks are held: their heartbeats go first at the gate. */
  readonly holding: Pick<HeldLocks, 'heartbeatsBehind' | 'heartbeatsOverdue'>;
}

export interface AcquisitionParts extends AcquireSettings {
  /** The reads and writes of an acquisition, fenced when the client fences. */
  readonly requests: AcquisitionRequests;
  readonly clock: MonotonicClock;
  readonly logger: Logger | undefined;
  /** Maps errors about the table itself to typed errors. */
  readonly explain: (error: unknown) => Promise<unknown>;
  readonly observations: LockObservationCache;
  /** The polling loops, shared by the acquisitions waiting for the same lock. */
  readonly pollers: LockPollers;
  /** Whether the table is known to have this client's key schema, so that the new-lock write may go first. */
  readonly keySchema: KeySchemaProof;
  /** Holds acquisition requests (and every read of locks not held) back while heartbeats are behind. */
  readonly gate: AcquisitionGate;
  /** This client's turns on the locks it releases and asks for again at once. */
  readonly turns: Turns;
  readonly replication: ReplicationCheck | undefined;
  /** The bounded-clock takeover (client option `clockBound`); absent when off. */
  readonly clockBound: ClockBound | undefined;
}

export function acquisitionPartsOf(options: AcquisitionPartsOptions): AcquisitionParts {
  const { dynamoDB, table, settings, clock, logger, holding } = options;
  const requests = new AcquisitionRequests({
    dynamoDB,
    heartbeatDynamoDB: options.heartbeatDynamoDB,
    table,
    clock,
    fencingTable: options.fencingTable,
    // The option that keeps heartbeats out of PartiQL batches keeps acquisitions out of them too.
    batching: settings.heartbeatBatchSize > 1,
    logger,
    stamping: settings.clockBound !== undefined,
  });
  const gate = new AcquisitionGate({
    heartbeatsBehind: () => holding.heartbeatsBehind(),
    heartbeatsOverdue: () => holding.heartbeatsOverdue(),
    limit: ACQUISITION_REQUESTS_IN_FLIGHT,
    // Few enough that heartbeats get nearly all of the server while they catch up.
    limitWhileBehind: Math.max(1, Math.floor(settings.heartbeatConcurrency * ACQUISITIONS_WHILE_BEHIND_SHARE)),
    // As long as a poll may then take to be answered: a waiting call is never blind for much more than a lease.
    pollPatienceMs: settings.leaseDuration,
    renewalLimit: Math.max(1, Math.floor(settings.heartbeatConcurrency * RENEWALS_SHARE_OF_HEARTBEAT_CONCURRENCY)),
  });
  // A poll counts against the acquisition limit, last in line, and is abandoned once unanswered for a lease (request-bound.ts).
  const poll = (key: Parameters<AcquisitionRequests['read']>[0], signal: AbortSignal) =>
    admittedWithinBound(gate, settings.leaseDuration, signal, (bounded) => requests.read(key, bounded), { lane: 'poll' });
  return {
    requests,
    table,
    ownerName: settings.ownerName,
    defaultLeaseDuration: settings.leaseDuration,
    heartbeatPeriod: settings.heartbeatPeriod,
    backgroundHeartbeats: settings.backgroundHeartbeats,
    safetyMargin: settings.safetyMargin,
    clock,
    logger,
    explain: (error) => explainTableError(dynamoDB, table, error),
    observations: new LockObservationCache(settings.maxLockObservationCacheSize, clock),
    pollers: new LockPollers({ clock, read: poll }),
    keySchema: new KeySchemaProof(table),
    gate,
    turns: new Turns(clock, REMEMBERED_TURNS),
    replication: options.replication,
    clockBound: clockBoundOf(settings, clock),
  };
}

/** The bounded-clock takeover of a client with the option; the client checked that its clock has a wall clock. */
function clockBoundOf(settings: ResolvedSettings, clock: MonotonicClock): ClockBound | undefined {
  if (settings.clockBound === undefined) return undefined;
  return new ClockBound(settings.clockBound.maxSkew, clock as MonotonicClock & { wallNow(): number });
}
