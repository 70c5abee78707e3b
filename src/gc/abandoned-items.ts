/**
 * `collectAbandoned`: one pass over the lock table that deletes the items
 * whose holders stopped, judged the way a Java waiter judges a lock it takes
 * over (judge.ts). A pass reads every item once (a consistent Scan) and
 * notes each RVN with the instant its page arrived; waits until the RVN of
 * the last item watched has stood still for its lease; reads the items again
 * (a second Scan), leaving those that changed; and deletes the rest, each
 * conditioned on the RVN and owner first seen. The second read spares a live
 * holder's item a refused write; the condition alone keeps it safe.
 *
 * Every request is bounded by the client's lease, as listings are; deletes
 * go a few at a time, one at a time while this client's heartbeats are
 * behind, so that the locks it holds come first.
 */
import type { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { ListingSchemaCheck } from '../acquire/listing-schema-check.js';
import { withinBound } from '../acquire/request-bound.js';
import type { MonotonicClock } from '../base/clock.js';
import { DynamoDBTimeoutError } from '../base/errors.js';
import { describeLockKey, lockId } from '../base/lock-key.js';
import type { Logger } from '../base/logger.js';
import { LockPages, type ItemPage } from '../dynamodb/list-locks.js';
import { explainTableError } from '../dynamodb/lock-table.js';
import type { HeldLocks } from '../heartbeat/held-locks.js';
import { abortableSleep } from '../primitives/abortable-sleep.js';
import { BoundedRuns } from '../primitives/bounded-runs.js';
import { runWithinLifetime } from '../primitives/lifetime-call.js';
import { keyOfLockItem, type LockTable } from '../protocol/index.js';
import { MAX_DURATION_MS, type ResolvedSettings } from '../settings/options.js';
import {
  resolveCollectOptions,
  type AbandonedItemsReport,
  type CollectAbandonedOptions,
  type LeftItem,
  type LeftReason,
  type ResolvedCollectOptions,
  type SeenLock,
} from './collect-options.js';
import { deleteAbandoned } from './delete-abandoned.js';
import { firstLook, isUnchanged, standStillAt, type FirstLookRules, type Watched } from './judge.js';

export interface AbandonedItemsOptions {
  readonly dynamoDB: Pick<DynamoDBClient, 'send'>;
  readonly table: LockTable;
  readonly settings: ResolvedSettings;
  readonly clock: MonotonicClock;
  readonly logger: Logger | undefined;
  /** The locks this client holds: never deleted, and their heartbeats go first. */
  readonly holding: HeldLocks;
  /** Aborts when the client closes. */
  readonly lifetime: AbortSignal;
}

export class AbandonedItems {
  readonly #options: AbandonedItemsOptions;
  readonly #schema: ListingSchemaCheck;

  constructor(options: AbandonedItemsOptions) {
    this.#options = options;
    const { dynamoDB, table, settings, lifetime, logger } = options;
    this.#schema = new ListingSchemaCheck({ dynamoDB, table, boundMs: settings.leaseDuration, lifetime, logger });
  }

  collect(options: CollectAbandonedOptions): Promise<AbandonedItemsReport> {
    const resolved = resolveCollectOptions(options);
    return runWithinLifetime(this.#options.lifetime, resolved.signal, async (signal) => {
      await this.#schema.ensure(signal);
      return new Pass(this.#options, resolved, signal).run();
    });
  }
}

/** One pass: its reads, its watch, its deletes and what it found. */
class Pass {
  readonly #options: AbandonedItemsOptions;
  readonly #choice: ResolvedCollectOptions;
  readonly #signal: AbortSignal;
  readonly #rules: FirstLookRules;
  readonly #startedAt: number;
  /** When the pass ends, on the client's clock. */
  readonly #endsAt: number;
  /** The items watched, by lock id, until the second read decides on them. */
  readonly #watched = new Map<string, Watched>();
  readonly #deleted: SeenLock[] = [];
  readonly #left: LeftItem[] = [];
  #complete = true;

  constructor(options: AbandonedItemsOptions, choice: ResolvedCollectOptions, signal: AbortSignal) {
    this.#options = options;
    this.#choice = choice;
    this.#signal = signal;
    const { holding, settings } = options;
    this.#rules = {
      // A lock acquired and not yet held shows this client's owner name.
      isHeldHere: (lock) => holding.get(lockId(lock)) !== undefined || (lock.ownerName === settings.ownerName && !lock.isReleased),
      maxLeaseMs: choice.maxLease,
    };
    this.#startedAt = options.clock.now();
    this.#endsAt = this.#startedAt + choice.maxDuration;
  }

  async run(): Promise<AbandonedItemsReport> {
    await this.#firstRead();
    // The second read will take about as long as the first: a watch must end that long before the pass does.
    const readMs = this.#now() - this.#startedAt;
    let lastStandStill = -Infinity;
    for (const [id, watched] of this.#watched) {
      const at = standStillAt(watched);
      if (at + readMs > this.#endsAt) {
        this.#watched.delete(id);
        this.#left.push({ reason: 'lease-outlasts-pass', lock: watched.lock });
      } else {
        lastStandStill = Math.max(lastStandStill, at);
      }
    }
    if (this.#watched.size > 0) {
      await this.#sleepUntil(lastStandStill);
      await this.#secondReadAndDelete();
    }
    return { deleted: this.#deleted, left: this.#left, complete: this.#complete, durationMs: this.#now() - this.#startedAt };
  }

  async #firstRead(): Promise<void> {
    const { table } = this.#options;
    const pages = this.#pages();
    while (!pages.done) {
      if (this.#now() >= this.#endsAt) {
        this.#complete = false;
        return;
      }
      const { items, observedAt } = await this.#page(pages);
      for (const item of items) {
        const look = firstLook(table, item, observedAt, this.#rules);
        if ('left' in look) this.#left.push(look.left);
        else this.#watched.set(lockId(look.watch.lock), look.watch);
      }
    }
  }

  /** Reads the items again, page by page, and deletes each watched one that is unchanged while the next pages are read. */
  async #secondReadAndDelete(): Promise<void> {
    const { table, holding } = this.#options;
    const deletes = new BoundedRuns(() => (holding.heartbeatsBehind() ? 1 : this.#choice.concurrency));
    const pages = this.#pages();
    let readError: unknown;
    try {
      while (!pages.done && this.#now() < this.#endsAt) {
        for (const item of (await this.#page(pages)).items) {
          const key = keyOfLockItem(table, item);
          const watched = key === undefined ? undefined : this.#watched.get(lockId(key));
          if (watched === undefined) continue;
          this.#watched.delete(lockId(watched.lock));
          if (!isUnchanged(table, watched, item)) this.#left.push({ reason: 'moved', lock: watched.lock });
          else await deletes.add(() => this.#collect(watched));
        }
      }
    } catch (error) {
      readError = error;
    }
    await deletes.settled();
    this.#signal.throwIfAborted();
    // Not found again: gone, unless the read did not get that far.
    for (const { lock } of this.#watched.values()) {
      if (readError !== undefined) this.#left.push({ reason: 'error', lock, error: readError });
      else this.#left.push({ reason: pages.done ? 'gone' : 'pass-ended', lock });
    }
  }

  /** Deletes one watched item found unchanged; never rejects, so that every outcome lands in the report. */
  async #collect(watched: Watched): Promise<void> {
    const { lock } = watched;
    // Already so when the second read began; kept here, beside the delete, as the rule that makes it safe.
    await this.#sleepUntil(standStillAt(watched)).catch(() => undefined);
    const notNow = this.#reasonNotToDelete(lock);
    if (notNow !== undefined) {
      this.#left.push({ reason: notNow, lock });
      return;
    }
    const { dynamoDB, table, settings } = this.#options;
    const boundMs = settings.leaseDuration;
    const abandoned = (timeout: DOMException): unknown =>
      new DynamoDBTimeoutError(`collectAbandoned: delete(${describeLockKey(lock)})`, boundMs, timeout);
    const { outcome, error } = await deleteAbandoned({ dynamoDB, table, boundMs, signal: this.#signal, abandoned }, lock);
    if (outcome === 'deleted') this.#deleted.push(lock);
    else if (outcome === 'failed') this.#left.push({ reason: 'error', lock, error });
    else this.#left.push({ reason: outcome, lock });
  }

  #reasonNotToDelete(lock: SeenLock): LeftReason | undefined {
    if (this.#signal.aborted || this.#now() >= this.#endsAt) return 'pass-ended';
    if (this.#rules.isHeldHere(lock)) return 'held-here';
    return this.#choice.dryRun ? 'dry-run' : undefined;
  }

  #pages(): LockPages {
    const { dynamoDB, table, clock } = this.#options;
    return new LockPages(dynamoDB, table, clock, { consistentRead: true, partitionKeyPrefix: this.#choice.partitionKeyPrefix });
  }

  /** The next page, within the client's lease as every listing page is; an error explained as listings explain theirs. */
  async #page(pages: LockPages): Promise<ItemPage> {
    const { dynamoDB, table, settings } = this.#options;
    const boundMs = settings.leaseDuration;
    try {
      return await withinBound(
        boundMs,
        this.#signal,
        (signal) => pages.nextItems(signal),
        (timeout) => new DynamoDBTimeoutError('collectAbandoned: Scan', boundMs, timeout),
      );
    } catch (error) {
      this.#signal.throwIfAborted();
      throw await explainTableError(dynamoDB, table, error);
    }
  }

  /** Waits until the client's clock reads `instant` (in steps Node's timers can take). */
  async #sleepUntil(instant: number): Promise<void> {
    for (let now = this.#now(); now < instant; now = this.#now()) {
      await abortableSleep(Math.min(instant - now, MAX_DURATION_MS), this.#signal);
    }
  }

  #now(): number {
    return this.#options.clock.now();
  }
}
