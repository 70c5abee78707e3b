/**
 * Whether the lock table may carry locks at all: a global table replicated
 * with multi-Region eventual consistency (MREC) cannot, since each Region
 * grants a conditional write on its own copy. DescribeTable tells: `Replicas`
 * lists the Regions of a global table (version 2019.11.21), and
 * `MultiRegionConsistency` is `STRONG` for MRSC, `EVENTUAL` or absent
 * otherwise. Checked once per client, before its first acquisition.
 */
import type { DynamoDBClient, TableDescription } from '@aws-sdk/client-dynamodb';
import { DynamoDBTimeoutError, LockTableDoesNotExistError } from '../base/errors.js';
import { LockTableReplicationError } from '../base/lock-table-replication-error.js';
import { deadline } from '../primitives/deadline.js';
import { raceAbort } from '../primitives/race-abort.js';
import type { LockTable } from '../protocol/index.js';
import { describeLockTable } from './lock-table.js';
import { isAccessDenied } from './sdk-errors.js';

/**
 * How long the shared DescribeTable may take. It answers in milliseconds;
 * without a bound, one silent connection would hold every first acquisition.
 */
export const REPLICATION_CHECK_TIMEOUT_MS = 10_000;

const FENCING = 'fencingTableName (fencing tokens)';

/** How the lock table is replicated, as far as locks are concerned. */
export type TableReplication = 'single-region' | 'strong';

/** The table's replication from its description; throws for eventual consistency. */
export function replicationOf(description: TableDescription, tableName: string): TableReplication {
  const regions = (description.Replicas ?? []).map((replica) => replica.RegionName ?? '?');
  if (regions.length === 0) return 'single-region';
  // Read by shape: SDKs older than multi-Region strong consistency neither type nor keep the field, and then the table is refused.
  if ((description as { MultiRegionConsistency?: string }).MultiRegionConsistency === 'STRONG') return 'strong';
  throw new LockTableReplicationError('EVENTUAL_CONSISTENCY', tableName, { replicaRegions: regions });
}

export interface ReplicationCheckOptions {
  readonly dynamoDB: Pick<DynamoDBClient, 'send'>;
  readonly table: LockTable;
  /** The client acquires through transactions (a fencing table), which MRSC refuses. */
  readonly fencing: boolean;
  /** Aborted when the client closes. */
  readonly lifetime: AbortSignal;
}

/** The client's one check of its lock table; concurrent first acquisitions share it. */
export class ReplicationCheck {
  readonly #options: ReplicationCheckOptions;
  /** Settled with the verdict; dropped again when the check could not be made, so that the next acquisition retries. */
  #verdict: Promise<TableReplication> | undefined;
  /** Known once the check succeeded. */
  #replication: TableReplication | undefined;

  constructor(options: ReplicationCheckOptions) {
    this.#options = options;
  }

  /** Whether the table is known to be safe for this client's locks: no call is needed any more. */
  get passed(): boolean {
    return this.#replication !== undefined;
  }

  /**
   * Resolves once the table is known to be safe for this client's locks.
   * DescribeTable's own errors come as they are, for the acquisition to
   * sort (an outage or a throttle is tried again within its wait), and one
   * unanswered within its bound as a `DynamoDBTimeoutError`.
   * @throws LockTableReplicationError for an MREC table, for fencing on MRSC, or without DescribeTable permission.
   * @throws LockTableDoesNotExistError when the table is missing.
   */
  async ensure(signal: AbortSignal): Promise<void> {
    if (this.#replication !== undefined) return;
    this.#verdict ??= this.#check();
    await raceAbort(this.#verdict, signal);
  }

  /** Refuses a transaction on an MRSC table, from the verdict already known; no call. */
  refuseTransactions(feature: string): void {
    if (this.#replication === 'strong') {
      throw new LockTableReplicationError('TRANSACTIONS_UNSUPPORTED', this.#options.table.tableName, { feature });
    }
  }

  async #check(): Promise<TableReplication> {
    const { dynamoDB, table, fencing, lifetime } = this.#options;
    const bound = deadline(REPLICATION_CHECK_TIMEOUT_MS);
    try {
      const description = await describeLockTable(dynamoDB, table, AbortSignal.any([lifetime, bound.signal]));
      if (description === undefined) throw new LockTableDoesNotExistError(table.tableName);
      const replication = replicationOf(description, table.tableName);
      if (fencing && replication === 'strong') {
        throw new LockTableReplicationError('TRANSACTIONS_UNSUPPORTED', table.tableName, { feature: FENCING });
      }
      this.#replication = replication;
      return replication;
    } catch (error) {
      // Only a table found unsafe keeps its verdict: permissions, outages and missing tables may be fixed.
      if (!(error instanceof LockTableReplicationError)) this.#verdict = undefined;
      if (isAccessDenied(error)) throw new LockTableReplicationError('DESCRIBE_TABLE_DENIED', table.tableName, { cause: error });
      // Abandoned unanswered: the SDK's own AbortError says nothing of why.
      if (bound.signal.aborted && !lifetime.aborted) throw new DynamoDBTimeoutError('DescribeTable', REPLICATION_CHECK_TIMEOUT_MS, error);
      throw error;
    } finally {
      bound.clear();
    }
  }
}
