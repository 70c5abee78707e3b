/**
 * A Scan or Query through the wrong key names decodes without error (the
 * sort key lands among the additional attributes), so listings check the
 * table's key schema first, once per client. Without DescribeTable
 * permission the check is skipped.
 */
import type { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { LockTableDoesNotExistError, LockTableSchemaMismatchError } from '../base/errors.js';
import type { Logger } from '../base/logger.js';
import { assertLockTableExists } from '../dynamodb/lock-table.js';
import type { LockTable } from '../protocol/index.js';

export class ListingSchemaCheck {
  readonly #dynamoDB: Pick<DynamoDBClient, 'send'>;
  readonly #table: LockTable;
  readonly #logger: Logger | undefined;
  #check: Promise<void> | undefined;

  constructor(dynamoDB: Pick<DynamoDBClient, 'send'>, table: LockTable, logger: Logger | undefined) {
    this.#dynamoDB = dynamoDB;
    this.#table = table;
    this.#logger = logger;
  }

  /** Resolves once the key schema is known to fit, or cannot be checked; rejects when it definitely does not. */
  ensure(): Promise<void> {
    this.#check ??= this.#run();
    return this.#check;
  }

  async #run(): Promise<void> {
    try {
      await assertLockTableExists(this.#dynamoDB, this.#table);
    } catch (error) {
      const definite =
        error instanceof LockTableSchemaMismatchError || (error instanceof LockTableDoesNotExistError && error.cause === undefined);
      if (!definite) {
        this.#logger?.debug({ err: error }, 'could not check the lock table key schema before listing');
        return;
      }
      this.#check = undefined; // the table may be fixed or created later
      throw error;
    }
  }
}
