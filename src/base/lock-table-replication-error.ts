/**
 * The lock table's replication would break the lock's promise, or could not
 * be checked. A lock is one conditional write winning over all others; on a
 * global table that holds only where every Region sees every write before it
 * answers, which is multi-Region strong consistency (MRSC).
 */
import { DynamoDBLockError, guardByName } from './errors.js';

/**
 * - `EVENTUAL_CONSISTENCY`: a global table with multi-Region eventual
 *   consistency (MREC): each Region checks a write's condition against its
 *   own copy and replicates it later, where the last writer wins, so two
 *   clients in two Regions can both be granted one lock;
 * - `TRANSACTIONS_UNSUPPORTED`: a global table with multi-Region strong
 *   consistency refuses transactions, which fencing tokens and guarded
 *   writes are;
 * - `DESCRIBE_TABLE_DENIED`: the client may not call DescribeTable, so it
 *   cannot tell whether the table is replicated.
 */
export type LockTableReplicationCode = 'EVENTUAL_CONSISTENCY' | 'TRANSACTIONS_UNSUPPORTED' | 'DESCRIBE_TABLE_DENIED';

const OPT_OUT = 'allowEventuallyConsistentGlobalTable';

function explain(code: LockTableReplicationCode, tableName: string, regions: readonly string[], feature: string | undefined): string {
  const table = JSON.stringify(tableName);
  const where = regions.length === 0 ? '' : ` (replicas in ${regions.join(', ')})`;
  switch (code) {
    case 'EVENTUAL_CONSISTENCY':
      return (
        `Lock table ${table} is a global table with multi-Region eventual consistency${where}: each Region checks a ` +
        'conditional write against its own copy and the last writer wins, so clients in two Regions could hold one lock ' +
        `at once. Use a single-Region table or one with multi-Region strong consistency, or set ${OPT_OUT}: true to accept the risk`
      );
    case 'TRANSACTIONS_UNSUPPORTED':
      return (
        `Lock table ${table} is a global table with multi-Region strong consistency${where}, which does not support ` +
        `transactions: ${feature ?? 'this feature'} needs TransactWriteItems. Locks themselves work on it`
      );
    case 'DESCRIBE_TABLE_DENIED':
      return (
        `Cannot check whether lock table ${table} is a global table with eventual consistency: dynamodb:DescribeTable ` +
        `on it was refused. Grant that permission (docs/iam/), or set ${OPT_OUT}: true to skip the check`
      );
  }
}

export class LockTableReplicationError extends DynamoDBLockError {
  override name = 'LockTableReplicationError';
  readonly code: LockTableReplicationCode;
  readonly tableName: string;
  /** The Regions of the table's replicas, as DescribeTable listed them. */
  readonly replicaRegions: readonly string[];
  constructor(
    code: LockTableReplicationCode,
    tableName: string,
    details: { readonly replicaRegions?: readonly string[]; readonly feature?: string; readonly cause?: unknown } = {},
  ) {
    const regions = details.replicaRegions ?? [];
    super(explain(code, tableName, regions, details.feature), details.cause === undefined ? undefined : { cause: details.cause });
    this.code = code;
    this.tableName = tableName;
    this.replicaRegions = regions;
  }
}

export const isLockTableReplicationError = guardByName<LockTableReplicationError>('LockTableReplicationError');
