/**
 * A Scan or Query through the wrong key names decodes without error (the
 * sort key lands among the additional attributes), so listings check the
 * table's key schema first; concurrent listings share one check. A fitting
 * schema is known for the life of the client, and so is a missing
 * DescribeTable permission (the check is then skipped). A check that could
 * not be made (no answer within its bound, throttling, the network) is
 * skipped for that listing only: the check is a guard against a
 * misconfiguration that does not come and go, and the listing's own
 * requests are bounded, so the listing goes on and the next one checks again.
 */
import type { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { LockTableDoesNotExistError, LockTableSchemaMismatchError } from '../base/errors.js';
import type { Logger } from '../base/logger.js';
import { assertLockTableExists } from '../dynamodb/lock-table.js';
import { isAccessDenied } from '../dynamodb/sdk-errors.js';
import { raceAbort } from '../primitives/race-abort.js';
import type { LockTable } from '../protocol/index.js';
import { withinBound } from './request-bound.js';

export interface ListingSchemaCheckOptions {
  readonly dynamoDB: Pick<DynamoDBClient, 'send'>;
  readonly table: LockTable;
  /** Milliseconds the check may go unanswered before it is abandoned: a lease, as for the listing's own requests. */
  readonly boundMs: number;
  /** Aborted when the client closes. */
  readonly lifetime: AbortSignal;
  readonly logger: Logger | undefined;
}

export class ListingSchemaCheck {
  readonly #options: ListingSchemaCheckOptions;
  /** The check under way or its lasting outcome; dropped when another listing should check again. */
  #check: Promise<void> | undefined;

  constructor(options: ListingSchemaCheckOptions) {
    this.#options = options;
  }

  /**
   * Resolves once the key schema is known to fit, or cannot be checked;
   * rejects when it definitely does not, when the client closes, or when
   * `signal` aborts (this wait ends; the shared check runs on, within its
   * bound).
   */
  ensure(signal: AbortSignal | undefined): Promise<void> {
    this.#check ??= this.#run();
    return raceAbort(this.#check, signal);
  }

  async #run(): Promise<void> {
    const { dynamoDB, table, boundMs, lifetime, logger } = this.#options;
    try {
      await withinBound(boundMs, lifetime, (signal) => assertLockTableExists(dynamoDB, table, signal));
    } catch (error) {
      // Wrong keys or a missing table may be fixed, and an answer that did not come may come next time.
      if (!deniedForGood(error)) this.#check = undefined;
      if (definite(error) || lifetime.aborted) throw error;
      logger?.debug({ err: error }, 'could not check the lock table key schema before listing; listing without the check');
    }
  }
}

/** DescribeTable answered: the table is missing, or its keys are not the configured ones. */
function definite(error: unknown): boolean {
  return error instanceof LockTableSchemaMismatchError || (error instanceof LockTableDoesNotExistError && error.cause === undefined);
}

/** DescribeTable is not allowed: that does not change by itself. */
function deniedForGood(error: unknown): boolean {
  return error instanceof LockTableDoesNotExistError && isAccessDenied(error.cause);
}
