/**
 * The input of the protocol's reads of lock items, its listings and its
 * requests about the table itself (PROTOCOL.md §1.2, §4), as pure functions.
 */
import type {
  BatchGetItemCommandInput,
  CreateTableCommandInput,
  DescribeTableCommandInput,
  GetItemCommandInput,
  QueryCommandInput,
  ScanCommandInput,
} from '@aws-sdk/client-dynamodb';
import type { LockKey } from '../base/lock-key.js';
import type { LockTable } from './attributes.js';
import type { LockItem } from './codec.js';
import { PARTITION_KEY_CONDITION } from './expressions.js';
import { validateLockKey } from './limits.js';
import { lockItemKey } from './requests.js';

/** The consistent read of one lock (PROTOCOL.md §4.1). */
export function buildGetLockRequest(table: LockTable, key: LockKey): GetItemCommandInput {
  return { TableName: table.tableName, Key: lockItemKey(table, key), ConsistentRead: true };
}

/** The most keys one BatchGetItem reads. */
export const MAX_BATCH_GET_KEYS = 100;

/**
 * The consistent reads of up to {@link MAX_BATCH_GET_KEYS} locks in one
 * call: each item as its own GetItem (PROTOCOL.md §4.1) would return it.
 */
export function buildBatchGetLocksRequest(table: LockTable, keys: readonly LockKey[]): BatchGetItemCommandInput {
  if (keys.length === 0 || keys.length > MAX_BATCH_GET_KEYS)
    throw new RangeError(`a BatchGetItem reads 1 to ${MAX_BATCH_GET_KEYS} keys, got ${keys.length}`);
  return { RequestItems: { [table.tableName]: { Keys: keys.map((key) => lockItemKey(table, key)), ConsistentRead: true } } };
}

export interface ListRequestOptions {
  /** Where the previous page ended. */
  readonly exclusiveStartKey?: LockItem | undefined;
  /** Java lists eventually consistently; a consistent listing costs twice the read capacity. */
  readonly consistentRead?: boolean | undefined;
}

const listOptions = (options: ListRequestOptions): Partial<ScanCommandInput> => ({
  ...(options.consistentRead ? { ConsistentRead: true } : {}),
  ...(options.exclusiveStartKey === undefined ? {} : { ExclusiveStartKey: options.exclusiveStartKey }),
});

/** Ours, not Java's: a Scan of only the locks whose partition key starts with `:prefix`. */
export const PARTITION_KEY_PREFIX_FILTER = 'begins_with(#pk, :prefix)';

export interface ScanRequestOptions extends ListRequestOptions {
  /**
   * Only the locks whose partition key starts with this: DynamoDB still
   * reads (and bills) every item, but returns only those.
   */
  readonly partitionKeyPrefix?: string | undefined;
}

/** One page of every lock in the table (PROTOCOL.md §4.10), or of those with `partitionKeyPrefix`. */
export function buildScanRequest(table: LockTable, options: ScanRequestOptions = {}): ScanCommandInput {
  const prefix = options.partitionKeyPrefix;
  if (prefix === undefined) return { TableName: table.tableName, ...listOptions(options) };
  return {
    TableName: table.tableName,
    FilterExpression: PARTITION_KEY_PREFIX_FILTER,
    ExpressionAttributeNames: { '#pk': table.partitionKeyName },
    ExpressionAttributeValues: { ':prefix': { S: prefix } },
    ...listOptions(options),
  };
}

/** One page of the locks sharing a partition key (PROTOCOL.md §4.11). */
export function buildQueryRequest(table: LockTable, partitionKey: string, options: ListRequestOptions = {}): QueryCommandInput {
  validateLockKey({ partitionKeyName: table.partitionKeyName }, { partitionKey });
  return {
    TableName: table.tableName,
    KeyConditionExpression: PARTITION_KEY_CONDITION,
    ExpressionAttributeNames: { '#pk': table.partitionKeyName },
    ExpressionAttributeValues: { ':pk': { S: partitionKey } },
    ...listOptions(options),
  };
}

export function buildDescribeTableRequest(table: Pick<LockTable, 'tableName'>): DescribeTableCommandInput {
  return { TableName: table.tableName };
}

/** On-demand capacity, or provisioned read and write capacity units. */
export type LockTableBilling =
  | { readonly billingMode: 'PAY_PER_REQUEST' }
  | { readonly billingMode: 'PROVISIONED'; readonly readCapacityUnits: number; readonly writeCapacityUnits: number };

/** The CreateTable request of PROTOCOL.md §1.2, with a choice of billing mode. */
export function buildCreateTableRequest(table: LockTable, billing: LockTableBilling): CreateTableCommandInput {
  const keySchema: NonNullable<CreateTableCommandInput['KeySchema']> = [{ AttributeName: table.partitionKeyName, KeyType: 'HASH' }];
  const definitions: NonNullable<CreateTableCommandInput['AttributeDefinitions']> = [
    { AttributeName: table.partitionKeyName, AttributeType: 'S' },
  ];
  if (table.sortKeyName !== undefined) {
    keySchema.push({ AttributeName: table.sortKeyName, KeyType: 'RANGE' });
    definitions.push({ AttributeName: table.sortKeyName, AttributeType: 'S' });
  }
  const input: CreateTableCommandInput = {
    AttributeDefinitions: definitions,
    TableName: table.tableName,
    KeySchema: keySchema,
  };
  if (billing.billingMode === 'PROVISIONED') {
    input.ProvisionedThroughput = {
      ReadCapacityUnits: billing.readCapacityUnits,
      WriteCapacityUnits: billing.writeCapacityUnits,
    };
  } else {
    input.BillingMode = 'PAY_PER_REQUEST';
  }
  return input;
}
