/**
 * Fenced acquisitions (client option `fencingTableName`): each acquisition
 * write goes out in one transaction with the step of the lock's fencing
 * counter (protocol/fencing.ts), after a consistent read of that counter.
 * The token is known before the transaction is sent, so an acquisition whose
 * outcome was unknown and turns out applied still has its token.
 */
import { GetItemCommand, TransactWriteItemsCommand, type DynamoDBClient, type TransactWriteItem } from '@aws-sdk/client-dynamodb';
import type { LockKey } from '../base/lock-key.js';
import { randomUUID } from 'node:crypto';
import type { Departure } from './departure.js';
import type { LeaseRestatement } from './lease-restatement.js';
import { isResourceNotFound } from './sdk-errors.js';
import { LockTableDoesNotExistError } from '../base/errors.js';
import {
  buildFencedAcquisition,
  buildFencingReadRequest,
  fencingTokenOf,
  type LockRecordToWrite,
  type LockTable,
  type LockWriteRequest,
} from '../protocol/index.js';

export class Fencing {
  readonly #dynamoDB: Pick<DynamoDBClient, 'send'>;
  readonly #fencingTable: LockTable;

  constructor(dynamoDB: Pick<DynamoDBClient, 'send'>, fencingTable: LockTable) {
    this.#dynamoDB = dynamoDB;
    this.#fencingTable = fencingTable;
  }

  /**
   * Sends the acquisition `request` of `record` with the counter's step.
   * `tokenChosen` learns the token before anything is sent, whatever the
   * outcome. A cancellation names the lock write's reason first (see
   * sdk-errors.ts); the counter having moved since it was read is a
   * race like another acquirer's write under way.
   */
  async send(
    request: LockWriteRequest,
    record: LockRecordToWrite,
    tokenChosen: (token: bigint) => void,
    signal?: AbortSignal,
    departure?: Departure,
    restatement?: LeaseRestatement,
  ): Promise<void> {
    const fenced = buildFencedAcquisition(
      this.#fencingTable,
      { request, key: record, ownerName: record.ownerName, recordVersionNumber: record.recordVersionNumber },
      await this.read(record, signal),
    );
    tokenChosen(fenced.token);
    await sendTransaction(this.#dynamoDB, fenced.items, signal, departure, restatement);
  }

  /** The fencing table, with the lock table's key names. */
  get table(): LockTable {
    return this.#fencingTable;
  }

  /** The key's counter, read consistently; `undefined` before its first fenced acquisition. */
  async read(key: LockKey, signal?: AbortSignal): Promise<bigint | undefined> {
    const read = await this.#dynamoDB
      .send(new GetItemCommand(buildFencingReadRequest(this.#fencingTable, key)), { abortSignal: signal })
      .catch((error: unknown) => {
        throw isResourceNotFound(error) ? new LockTableDoesNotExistError(this.#fencingTable.tableName, { cause: error }) : error;
      });
    return fencingTokenOf(read.Item);
  }
}

/**
 * Sends an acquisition transaction with a `ClientRequestToken` of its own:
 * the SDK's retries of it carry the same token, so one that committed is
 * answered with success, not applied again; but for a bounded lock's, whose
 * retries state a new lease and a new token (lease-restatement.ts).
 */
export async function sendTransaction(
  dynamoDB: Pick<DynamoDBClient, 'send'>,
  items: TransactWriteItem[],
  signal?: AbortSignal,
  departure?: Departure,
  restatement?: LeaseRestatement,
): Promise<void> {
  const transaction = new TransactWriteItemsCommand({ TransactItems: items, ClientRequestToken: randomUUID() });
  departure?.watch(transaction, dynamoDB);
  restatement?.watch(transaction);
  await dynamoDB.send(transaction, { abortSignal: signal });
}
