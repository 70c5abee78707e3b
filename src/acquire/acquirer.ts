/**
 * The acquiring side of one client, built once per client: everything it
 * sends about locks it does not hold (acquisitions, their polls, `getLock`
 * reads, listings) goes through here, behind one gate that lets heartbeats
 * go first. It owns the parts its acquisitions share (acquisition-parts.ts:
 * the requests, the polling loops, the gate, the turns, ...). An acquisition
 * ends by handing its record to the held locks once; their releases come
 * back to the turns through the held locks' `released` event.
 */
import { DynamoDBTimeoutError, InvalidArgumentError, LockClientClosedError, LockNotGrantedError } from '../base/errors.js';
import { describeLockKey, lockId, type LockKey } from '../base/lock-key.js';
import { LockPages, type LockListing } from '../dynamodb/list-locks.js';
import { readLock, type LockObservation } from '../dynamodb/read-lock.js';
import { readLocks } from '../dynamodb/read-locks.js';
import type { HeldLock } from '../hold/held-lock.js';
import type { HeldLocks } from '../heartbeat/held-locks.js';
import type { LeaseEnd } from '../hold/lease-end.js';
import type { HoldTerms } from '../hold/lock-state.js';
import { childAbortController, type ChildAbortController } from '../primitives/child-abort-controller.js';
import { deadline } from '../primitives/deadline.js';
import { AcquireLoop } from './acquire-lock.js';
import { adoptLock, type AdoptLockOptions } from './adopt-lock.js';
import { acquisitionPartsOf, type AcquisitionParts, type AcquisitionPartsOptions } from './acquisition-parts.js';
import {
  leaseEndFor,
  resolveAcquireOptions,
  validateAcquireKey,
  type AcquireLockOptions,
  type ResolvedAcquireOptions,
} from './acquire-options.js';
import type { GateLane } from './acquisition-gate.js';
import type { LateReplyContext } from './late-reply.js';
import { turnRequestOf } from './turns.js';
import { GroupAcquireLoop } from './group-acquire.js';
import { groupKeysOf, validateGroup, type AcquireLocksOptions, type GroupKey } from './group-options.js';
import { ListingSchemaCheck } from './listing-schema-check.js';
import { admittedWithinBound, type Abandonment } from './request-bound.js';
import type { Acquisition } from './steps.js';

export interface AcquirerOptions extends AcquisitionPartsOptions {
  /** Where acquired locks are held: handed each record once; their heartbeats go first at the gate. */
  readonly holding: HeldLocks;
  /** Aborts when the client closes. */
  readonly lifetime: AbortSignal;
}

export class Acquirer {
  readonly #options: AcquirerOptions;
  /** What every call shares; each call adds its own release of strays. */
  readonly #parts: AcquisitionParts;
  readonly #listingSchema: ListingSchemaCheck;
  /** Calls under way, acquisitions and reads; `close()` aborts them and waits for them to settle. */
  readonly #calls = new Map<ChildAbortController, Promise<unknown>>();

  constructor(options: AcquirerOptions) {
    this.#options = options;
    const { dynamoDB, table, settings, logger, holding } = options;
    this.#parts = acquisitionPartsOf(options);
    this.#listingSchema = new ListingSchemaCheck({ dynamoDB, table, boundMs: settings.leaseDuration, lifetime: options.lifetime, logger });
    holding.on('released', ({ held }) => this.#parts.turns.released(held.id));
  }

  /**
   * Acquires the lock (acquire-lock.ts) and hands it to the held locks.
   * With `reentrant`, a lock this client holds is returned as it is.
   */
  async acquire(key: LockKey, given: AcquireLockOptions): Promise<HeldLock> {
    const resolved = resolveAcquireOptions(this.#parts, given);
    const options = { ...resolved, leaseEnd: leaseEndFor(this.#parts, resolved, this.#parts.clock.now()) };
    validateAcquireKey(this.#parts, key, options);
    if (options.reentrant) {
      const mine = this.#options.holding.get(lockId(key));
      if (mine?.isHeld() === true) return mine;
    }
    return this.#call(options.signal, (call) =>
      this.#withinLeaseEnd(key, options.leaseEnd, call, async (signal) => {
        const [held] = await this.#hold([await this.#acquire(key, { ...options, signal })], options, signal);
        return held as HeldLock;
      }),
    );
  }

  /**
   * Runs an acquisition of a lock bounded by its holder's end (lease-end.ts)
   * until the lock's safe time would end: a lock won later could not be
   * acted on. It then ends with `LockNotGrantedError`, and a lock won meanwhile is released.
   */
  async #withinLeaseEnd<T>(key: LockKey, end: LeaseEnd | undefined, signal: AbortSignal, run: (signal: AbortSignal) => Promise<T>): Promise<T> {
    if (end === undefined) return run(signal);
    const cut = deadline(end.safeUntil - this.#parts.clock.now());
    try {
      return await run(AbortSignal.any([signal, cut.signal]));
    } catch (error) {
      if (!cut.signal.aborted || signal.aborted) throw error;
      throw new LockNotGrantedError(
        'the safe time of a lock won now would end before its holder could act (invocationDeadline)',
        key,
        undefined,
        {
          cause: error,
        },
      );
    } finally {
      cut.clear();
    }
  }

  /** Adopts a lock another client handed off (adopt-lock.ts) and hands it to the held locks, as an acquisition. */
  adopt(handle: unknown, options: AdoptLockOptions): Promise<HeldLock> {
    return this.#call(options.signal, async (signal) => {
      const { won, terms } = await adoptLock(this.#options, handle, { ...options, signal });
      const [held] = await this.#hold([won], terms, signal);
      return held as HeldLock;
    });
  }

  /**
   * `acquireLocks`: every lock of `keys` or none (group-acquire.ts), each
   * then held on its own. A key this client already holds is refused: a
   * group never takes, or waits for, a lock its own client holds.
   */
  async acquireGroup(keys: readonly GroupKey[], given: AcquireLocksOptions): Promise<HeldLock[]> {
    const lockKeys = groupKeysOf(keys);
    const options = resolveAcquireOptions(this.#parts, given);
    validateGroup(this.#parts, lockKeys, options, this.#options.fencingTable !== undefined);
    for (const key of lockKeys) {
      if (this.#options.holding.get(lockId(key))?.isHeld() === true) {
        throw new InvalidArgumentError(
          'LOCK_ALREADY_HELD',
          `acquireLocks: this client already holds ${describeLockKey(key)}; a group never takes a lock its client holds`,
        );
      }
    }
    return this.#call(options.signal, async (signal) => {
      const loop = new GroupAcquireLoop(this.#callParts(options), lockKeys, { ...options, signal });
      try {
        return await this.#hold(await loop.run(), options, signal);
      } finally {
        loop[Symbol.dispose]();
      }
    });
  }

  /** The parts of one acquisition: the shared ones, and the release of locks the call will not hand over. */
  #callParts(options: HoldTerms): AcquisitionParts & LateReplyContext {
    const releaseStray = async (strays: readonly Acquisition[]): Promise<void> => {
      if (strays.length > 0) await this.#hold(strays, options, undefined).then((held) => this.#releaseAll(held));
    };
    return { ...this.#parts, releaseStray };
  }

  /** Runs one call (an acquisition, a read, a listing's page), which `close()` aborts and waits for. */
  async #call<T>(signal: AbortSignal | undefined, run: (signal: AbortSignal) => Promise<T>): Promise<T> {
    const call = childAbortController(signal);
    const running = run(call.signal);
    this.#calls.set(call, running);
    try {
      return await running;
    } catch (error) {
      throw this.#options.lifetime.aborted ? new LockClientClosedError() : error;
    } finally {
      this.#calls.delete(call);
      call.dispose();
    }
  }

  /**
   * Hands the records won to the held locks. When `signal` (the call's) has
   * aborted, or the client closed, while the winning write was in flight, they
   * are released at once, best effort, and the call ends.
   */
  async #hold(acquisitions: readonly Acquisition[], options: HoldTerms, signal: AbortSignal | undefined): Promise<HeldLock[]> {
    const { holding, lifetime } = this.#options;
    const held = acquisitions.map((acquisition) => holding.track(acquisition, options));
    if (signal?.aborted === true || lifetime.aborted) {
      // The caller gave up (or the client closed) while the winning write was in flight: do not leave the locks held.
      await this.#releaseAll(held);
      throw lifetime.aborted ? new LockClientClosedError() : signal?.reason;
    }
    return held;
  }

  /** Releases `held`, best effort, all at once. */
  async #releaseAll(held: readonly HeldLock[]): Promise<void> {
    await Promise.all(held.map((one) => this.#options.holding.releaseLock(one, { bestEffort: true }).catch(() => undefined)));
  }

  /**
   * The acquire loop, within this client's turn on the lock (turns.ts): a
   * back-to-back acquisition whose turn is over stands aside first.
   */
  async #acquire(key: LockKey, options: ResolvedAcquireOptions): Promise<Acquisition> {
    const { turns } = this.#parts;
    const turn = turns.plan(lockId(key), turnRequestOf(options));
    const loop = new AcquireLoop(this.#callParts(options), key, options, turn);
    try {
      const acquisition = await loop.run();
      turns.taken(turn, acquisition.lookupTime, loop.waitedForAnother);
      return acquisition;
    } finally {
      loop[Symbol.dispose]();
    }
  }

  /** `getLock`: one consistent read of the lock (`undefined`: no item). */
  async readLock(key: LockKey, signal: AbortSignal | undefined): Promise<LockObservation | undefined> {
    const { dynamoDB, table, clock } = this.#options;
    try {
      const abandoned = this.#timedOut(`getLock(${describeLockKey(key)})`);
      return await this.#call(signal, (call) => this.#look(call, (bounded) => readLock(dynamoDB, table, key, clock, bounded), { abandoned }));
    } catch (error) {
      throw await this.#ended(error, signal);
    }
  }

  /** The consistent reads of several locks, in BatchGetItem calls (`undefined`: no item), for a semaphore's round. */
  async readLocks(keys: readonly LockKey[], signal: AbortSignal | undefined): Promise<(LockObservation | undefined)[]> {
    const { dynamoDB, table, clock } = this.#options;
    try {
      const abandoned = this.#timedOut(`getLocks(${describeLockKey(keys[0] as LockKey)}, … ${keys.length} keys)`);
      return await this.#call(signal, (call) => this.#look(call, (bounded) => readLocks(dynamoDB, table, keys, clock, bounded), { abandoned }));
    } catch (error) {
      throw await this.#ended(error, signal);
    }
  }

  /** The locks of a listing, page by page, once the table's key schema is known to fit (listing-schema-check.ts). */
  async *list(listing: LockListing, signal: AbortSignal | undefined): AsyncGenerator<LockObservation> {
    const { dynamoDB, table, clock } = this.#options;
    const pages = new LockPages(dynamoDB, table, clock, listing); // checks the listing before any call
    await this.#listingSchema.ensure(signal);
    const { partitionKey } = listing;
    const abandoned = this.#timedOut(partitionKey === undefined ? 'getAllLocks' : `getLocksByPartitionKey(${JSON.stringify(partitionKey)})`);
    while (!pages.done) {
      let page: Iterable<LockObservation>;
      try {
        page = await this.#call(signal, (call) => this.#look(call, (bounded) => pages.next(bounded), { abandoned }));
      } catch (error) {
        throw await this.#ended(error, signal);
      }
      yield* page;
    }
  }

  /**
   * What a call that looks at locks rejects with: the caller's own reason
   * when its signal aborted, as acquisitions do (the SDK would end the
   * request it cut with an `AbortError` of its own), else `error` explained.
   */
  async #ended(error: unknown, signal: AbortSignal | undefined): Promise<unknown> {
    return signal?.aborted === true ? signal.reason : this.#parts.explain(error);
  }

  /**
   * A request that only looks at locks (`getLock`, a listing page; a poll
   * likewise, acquisition-parts.ts): it counts against the acquisition
   * limit, and one unanswered for a lease is abandoned (a `TimeoutError`, or
   * what `abandoned` makes of it), so that it never holds a slot for ever.
   */
  #look<T>(
    signal: AbortSignal | undefined,
    request: (signal: AbortSignal) => Promise<T>,
    options?: { readonly lane?: GateLane; readonly abandoned?: Abandonment },
  ): Promise<T> {
    return admittedWithinBound(this.#parts.gate, this.#options.settings.leaseDuration, signal, request, options);
  }

  /** How a call the user makes to look at locks (`call`) rejects when its request is abandoned. */
  #timedOut(call: string): Abandonment {
    return (timeout) => new DynamoDBTimeoutError(call, this.#options.settings.leaseDuration, timeout);
  }

  /**
   * Aborts the calls under way and waits for them to settle: their requests
   * are cut off; a write of unknown outcome is left to lapse, one that won
   * is released, a read ends with `LockClientClosedError`.
   */
  async close(): Promise<void> {
    for (const call of this.#calls.keys()) call.abort(new LockClientClosedError());
    await Promise.allSettled(this.#calls.values());
  }
}
