/**
 * Creating the lock table and checking that it exists with the key schema
 * the client is configured for (PROTOCOL.md §1, §4.12).
 */
import {
  CreateTableCommand,
  DescribeTableCommand,
  ListTablesCommand,
  type DynamoDBClient,
  type TableDescription,
} from '@aws-sdk/client-dynamodb';
import { CREATE_TABLE_DEFAULTS } from '../settings/defaults.js';
import { abortableSleep } from '../primitives/abortable-sleep.js';
import { isResourceInUse, isResourceNotFound, isValidationError } from './sdk-errors.js';
import { InvalidArgumentError, LockTableAlreadyExistsError, LockTableDoesNotExistError, LockTableSchemaMismatchError } from '../base/errors.js';
import { buildCreateTableRequest, buildDescribeTableRequest, type LockTable, type LockTableBilling } from '../protocol/index.js';

type Sender = Pick<DynamoDBClient, 'send'>;

export interface CreateLockTableOptions {
  /** `PAY_PER_REQUEST` (on-demand) or `PROVISIONED`. @default "PAY_PER_REQUEST" */
  readonly billingMode?: 'PAY_PER_REQUEST' | 'PROVISIONED';
  /** Capacity units, required with `billingMode: "PROVISIONED"`. */
  readonly provisionedThroughput?: { readonly readCapacityUnits: number; readonly writeCapacityUnits: number };
  /** Succeed when the table already exists with the right key schema. @default false */
  readonly ifNotExists?: boolean;
  /** Milliseconds to wait for the table to become ACTIVE. @default 300000 */
  readonly activeTimeout?: number;
  readonly signal?: AbortSignal;
}

/** The cheapest request DynamoDB answers without a table (ListTables of one name): whether the endpoint is up. */
export async function listOneTable(dynamoDB: Sender, signal?: AbortSignal): Promise<void> {
  await dynamoDB.send(new ListTablesCommand({ Limit: 1 }), { abortSignal: signal });
}

const USABLE_STATUSES = new Set(['ACTIVE', 'UPDATING']);
const ACTIVE_POLL_MS = 250;

export async function describeLockTable(dynamoDB: Sender, table: LockTable, signal?: AbortSignal): Promise<TableDescription | undefined> {
  try {
    const output = await dynamoDB.send(new DescribeTableCommand(buildDescribeTableRequest(table)), { abortSignal: signal });
    return output.Table;
  } catch (error) {
    if (isResourceNotFound(error)) return undefined;
    throw error;
  }
}

function formatSchema(partitionKeyName: string | undefined, sortKeyName: string | undefined): string {
  return sortKeyName === undefined
    ? `(partition key ${JSON.stringify(partitionKeyName)})`
    : `(partition key ${JSON.stringify(partitionKeyName)}, sort key ${JSON.stringify(sortKeyName)})`;
}

/** Throws {@link LockTableSchemaMismatchError} unless the table's keys are the configured names, typed S. */
function checkKeySchema(description: TableDescription, table: LockTable, cause?: unknown): void {
  const hash = description.KeySchema?.find((k) => k.KeyType === 'HASH')?.AttributeName;
  const range = description.KeySchema?.find((k) => k.KeyType === 'RANGE')?.AttributeName;
  const typeOf = (name: string | undefined) => description.AttributeDefinitions?.find((d) => d.AttributeName === name)?.AttributeType;
  const typesMatch = typeOf(hash) === 'S' && (range === undefined || typeOf(range) === 'S');
  const mismatches = keyNameMismatches(table, hash, range);
  if (mismatches.length === 0 && !typesMatch) {
    mismatches.push(`Lock table ${JSON.stringify(table.tableName)} has key schema ${formatSchema(hash, range)} with non-string key types`);
  }
  if (mismatches.length > 0) {
    throw new LockTableSchemaMismatchError(table.tableName, mismatches.join('; '), cause === undefined ? undefined : { cause });
  }
}

/**
 * Each of the client's key names that does not match the table's key
 * attributes (`hash`, `range`), in a sentence that names the client's
 * option: it is the client that is configured for another table.
 */
function keyNameMismatches(table: LockTable, hash: string | undefined, range: string | undefined): string[] {
  const quote = (name: string | undefined): string => JSON.stringify(name);
  const ofTable = `lock table ${quote(table.tableName)}`;
  const mismatches: string[] = [];
  if (hash !== table.partitionKeyName) {
    mismatches.push(
      `The client's partitionKeyName ${quote(table.partitionKeyName)} does not match ${ofTable}, whose partition key is ${quote(hash)}`,
    );
  }
  if (range !== table.sortKeyName) {
    const clientSortKey = `The client's sortKeyName ${quote(table.sortKeyName)} does not match ${ofTable}`;
    mismatches.push(
      table.sortKeyName === undefined
        ? `The client has no sortKeyName, but ${ofTable} has sort key ${quote(range)}`
        : range === undefined
          ? `${clientSortKey}, which has no sort key`
          : `${clientSortKey}, whose sort key is ${quote(range)}`,
    );
  }
  return mismatches;
}

/** True when the table is ACTIVE or UPDATING, as in Java. */
export async function lockTableExists(dynamoDB: Sender, table: LockTable, signal?: AbortSignal): Promise<boolean> {
  const description = await describeLockTable(dynamoDB, table, signal);
  return description !== undefined && USABLE_STATUSES.has(description.TableStatus ?? '');
}

/** Throws unless the table is usable and has the configured key schema. */
export async function assertLockTableExists(dynamoDB: Sender, table: LockTable, signal?: AbortSignal): Promise<void> {
  let description: TableDescription | undefined;
  try {
    description = await describeLockTable(dynamoDB, table, signal);
  } catch (error) {
    if (signal?.aborted) throw signal.reason;
    throw new LockTableDoesNotExistError(table.tableName, { cause: error });
  }
  if (description === undefined || !USABLE_STATUSES.has(description.TableStatus ?? '')) {
    throw new LockTableDoesNotExistError(table.tableName);
  }
  checkKeySchema(description, table);
}

function billingOf(options: CreateLockTableOptions): LockTableBilling {
  const mode = options.billingMode ?? CREATE_TABLE_DEFAULTS.billingMode;
  if (mode === 'PAY_PER_REQUEST') {
    if (options.provisionedThroughput !== undefined) {
      throw new InvalidArgumentError('CONFLICTING_OPTIONS', 'provisionedThroughput needs billingMode "PROVISIONED"');
    }
    return { billingMode: mode };
  }
  const throughput = options.provisionedThroughput;
  const valid = (n: unknown) => typeof n === 'number' && Number.isSafeInteger(n) && n >= 1;
  if (throughput === undefined || !valid(throughput.readCapacityUnits) || !valid(throughput.writeCapacityUnits)) {
    throw new InvalidArgumentError(
      'INVALID_OPTION',
      'billingMode "PROVISIONED" needs provisionedThroughput with whole readCapacityUnits and writeCapacityUnits ≥ 1',
    );
  }
  return { billingMode: mode, ...throughput };
}

/**
 * Creates the table (on-demand unless told otherwise) and waits until it is ACTIVE.
 * With `ifNotExists` it asks DescribeTable first, so that a role allowed
 * DescribeTable but not CreateTable (the runtime policies of docs/iam/) gets
 * through when the table is there.
 * @throws LockTableAlreadyExistsError when it exists, unless `ifNotExists`.
 */
export async function createLockTable(dynamoDB: Sender, table: LockTable, options: CreateLockTableOptions = {}): Promise<void> {
  const billing = billingOf(options);
  const { signal } = options;
  const existing = options.ifNotExists ? await describeLockTable(dynamoDB, table, signal) : undefined;
  if (existing === undefined) {
    try {
      await dynamoDB.send(new CreateTableCommand(buildCreateTableRequest(table, billing)), { abortSignal: signal });
    } catch (error) {
      if (!isResourceInUse(error)) throw error;
      if (!options.ifNotExists) throw new LockTableAlreadyExistsError(table.tableName, { cause: error });
    }
  }
  const deadline = performance.now() + (options.activeTimeout ?? CREATE_TABLE_DEFAULTS.activeTimeout);
  // The description ifNotExists read first counts as the first poll.
  let description = existing;
  for (;;) {
    description ??= await describeLockTable(dynamoDB, table, signal);
    if (description !== undefined) {
      checkKeySchema(description, table);
      if (description.TableStatus === 'ACTIVE') return;
    }
    if (performance.now() > deadline) throw new LockTableDoesNotExistError(table.tableName);
    await abortableSleep(ACTIVE_POLL_MS, signal);
    description = undefined;
  }
}

/**
 * Turns DynamoDB's answer to a request on a missing or differently keyed
 * table into the typed error that says so; other errors pass unchanged.
 */
export async function explainTableError(dynamoDB: Sender, table: LockTable, error: unknown): Promise<unknown> {
  if (isResourceNotFound(error)) return new LockTableDoesNotExistError(table.tableName, { cause: error });
  if (!isValidationError(error)) return error;
  try {
    const description = await describeLockTable(dynamoDB, table);
    if (description === undefined) return new LockTableDoesNotExistError(table.tableName, { cause: error });
    checkKeySchema(description, table, error);
  } catch (diagnosis) {
    if (diagnosis instanceof LockTableSchemaMismatchError) return diagnosis;
    // The diagnosis itself failed; the original error says more.
  }
  return error;
}
