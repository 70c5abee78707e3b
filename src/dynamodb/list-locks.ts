/** The listings of locks: every lock in the table (Scan), or those sharing a partition key (Query), page by page. */
import { QueryCommand, ScanCommand, type DynamoDBClient } from '@aws-sdk/client-dynamodb';
import type { MonotonicClock } from '../base/clock.js';
import { buildQueryRequest, buildScanRequest, decodeLockItem, itemOrNone, type LockItem, type LockTable } from '../protocol/index.js';
import type { LockObservation } from './read-lock.js';

export interface LockListing {
  /** Only the locks on this partition key (a Query); every lock when absent (a Scan). */
  readonly partitionKey?: string | undefined;
  /** With a Scan: only the locks whose partition key starts with this. */
  readonly partitionKeyPrefix?: string | undefined;
  readonly consistentRead: boolean;
}

/** One page of a listing as stored, undecoded, and when it arrived. */
export interface ItemPage {
  readonly items: readonly LockItem[];
  readonly observedAt: number;
}

/** The pages of one listing, read one at a time. */
export class LockPages {
  readonly #dynamoDB: Pick<DynamoDBClient, 'send'>;
  readonly #table: LockTable;
  readonly #clock: MonotonicClock;
  readonly #listing: LockListing;
  /** Where the next page starts: `undefined` before the first, `null` after the last. */
  #next: LockItem | undefined | null;

  /** Checks the listing before any call. */
  constructor(dynamoDB: Pick<DynamoDBClient, 'send'>, table: LockTable, clock: MonotonicClock, listing: LockListing) {
    this.#dynamoDB = dynamoDB;
    this.#table = table;
    this.#clock = clock;
    this.#listing = listing;
    if (listing.partitionKey !== undefined) buildQueryRequest(table, listing.partitionKey);
  }

  /** True once the last page was read. */
  get done(): boolean {
    return this.#next === null;
  }

  /**
   * The next page's lock items, each decoded as it is taken (a malformed one
   * throws there, after the ones before it), timed from the page's arrival.
   */
  async next(signal: AbortSignal): Promise<Iterable<LockObservation>> {
    const { items, observedAt } = await this.nextItems(signal);
    return this.#decoded(items, observedAt);
  }

  /** The next page's items as stored, for a caller that decodes them itself (and goes on past a malformed one). */
  async nextItems(signal: AbortSignal): Promise<ItemPage> {
    const options = { exclusiveStartKey: this.#next ?? undefined, consistentRead: this.#listing.consistentRead };
    const { partitionKey, partitionKeyPrefix } = this.#listing;
    const page =
      partitionKey === undefined
        ? await this.#dynamoDB.send(new ScanCommand(buildScanRequest(this.#table, { ...options, partitionKeyPrefix })), { abortSignal: signal })
        : await this.#dynamoDB.send(new QueryCommand(buildQueryRequest(this.#table, partitionKey, options)), { abortSignal: signal });
    const observedAt = this.#clock.now();
    this.#next = itemOrNone(page.LastEvaluatedKey) ?? null;
    return { items: page.Items ?? [], observedAt };
  }

  *#decoded(items: readonly LockItem[], observedAt: number): Generator<LockObservation> {
    for (const item of items) yield { record: decodeLockItem(this.#table, item), observedAt };
  }
}
