/**
 * The writes of one acquisition: each new record it may write, sent, and the
 * ones whose outcome is unknown (a reply lost, a request cut off). The table
 * may hold any of those, and then the lock is the call's.
 */
import { randomUUID } from 'node:crypto';
import type { MonotonicClock } from '../base/clock.js';
import { lockId, type LockKey } from '../base/lock-key.js';
import { Departure } from '../dynamodb/departure.js';
import type { AcquisitionRequests } from '../dynamodb/acquisition-requests.js';
import type { LockObservation } from '../dynamodb/read-lock.js';
import { classifyFailedWrite } from '../dynamodb/write-outcome.js';
import { toBytes } from '../primitives/bytes.js';
import { raceAbort } from '../primitives/race-abort.js';
import { encodeAdditionalAttributes, type AcquisitionPath, type LockItem, type LockRecord, type LockRecordToWrite } from '../protocol/index.js';
import type { ResolvedAcquireOptions } from './acquire-options.js';
import type { LockObservationCache } from './observation-cache.js';
import type { Acquisition, Renewal } from './steps.js';

export interface AcquisitionWritesContext {
  readonly requests: AcquisitionRequests;
  readonly ownerName: string;
  readonly clock: MonotonicClock;
  readonly observations: LockObservationCache;
}

export class AcquisitionWrites {
  readonly #ctx: AcquisitionWritesContext;
  readonly #key: LockKey;
  readonly #options: ResolvedAcquireOptions;
  readonly #newData: Uint8Array | undefined;
  readonly #additionalAttributes: LockItem;
  /** Writes whose outcome is unknown. */
  readonly #unconfirmed: Acquisition[] = [];

  constructor(ctx: AcquisitionWritesContext, key: LockKey, options: ResolvedAcquireOptions) {
    this.#ctx = ctx;
    this.#key = key;
    this.#options = options;
    this.#newData = toBytes(options.data);
    this.#additionalAttributes = encodeAdditionalAttributes(options.additionalAttributes ?? {});
  }

  /** The record a write decided on `existing` (`undefined`: no item) sends, with a new RVN. */
  recordFor(existing: LockObservation | undefined): LockRecordToWrite {
    const replaceData = this.#options.replaceData;
    return {
      ...this.#key,
      ownerName: this.#ctx.ownerName,
      leaseDurationMs: this.#options.leaseDuration,
      recordVersionNumber: randomUUID(),
      data: !replaceData && existing?.record.data !== undefined ? existing.record.data : this.#newData,
      additionalAttributes: this.#options.additionalAttributes ?? {},
    };
  }

  /**
   * Sends one acquisition write. A write whose outcome is unknown is
   * remembered; a refusal that shows one of this call's writes in the table
   * means that write was applied, and the lock is ours.
   */
  async send(decided: LockRecordToWrite, path: AcquisitionPath, signal: AbortSignal): Promise<Acquisition> {
    const { clock, requests, observations } = this.#ctx;
    const record = this.#bounded(decided);
    // The lease counts from the earliest moment the write can have taken effect: when it first left.
    const departure = new Departure(clock);
    const restatement = this.#options.leaseEnd?.restatement(decided.leaseDurationMs, clock);
    let fencingToken: bigint | undefined;
    const options = { updateExistingLockRecord: this.#options.updateExistingLockRecord };
    let failure: { readonly error: unknown } | undefined;
    try {
      await requests.write(record, path, options, signal, (token) => (fencingToken = token), departure, restatement);
    } catch (error) {
      failure = { error };
    }
    const acquisition: Acquisition = { record, ...departure.lookup(), additionalAttributes: this.#additionalAttributes, fencingToken };
    // A failure may show this write, or one remembered before, applied after all.
    const applied = failure === undefined ? acquisition : this.#sortFailure(acquisition, failure.error);
    if (applied === undefined) throw (failure as { readonly error: unknown }).error;
    observations.forget(lockId(this.#key));
    return applied;
  }

  /**
   * Renews the lock `won` took (acquisition-requests.ts), for a caller that
   * would otherwise get it with little of its lease left. A renewal that
   * fails without being refused changes nothing that was won: `won` stays
   * the lock, and a renewal whose outcome is unknown goes with it as a write
   * the table may hold instead. Both also count as writes a later read may
   * find, making the lock this call's again.
   */
  async renew(won: Acquisition, signal: AbortSignal): Promise<Renewal> {
    // The call was cut off: nothing is sent.
    if (signal.aborted) return { kind: 'kept', acquisition: won };
    const asked = { ...won.record, recordVersionNumber: randomUUID() };
    const record = this.#bounded(asked);
    const departure = new Departure(this.#ctx.clock);
    let failure: { readonly error: unknown } | undefined;
    try {
      // Not a moment past `signal`: the SDK would wait out its retry's backoff first.
      await raceAbort(
        this.#ctx.requests.renew(
          won.record,
          record,
          signal,
          departure,
          this.#options.leaseEnd?.restatement(asked.leaseDurationMs, this.#ctx.clock),
        ),
        signal,
      );
    } catch (error) {
      failure = { error };
    }
    const renewal: Acquisition = { ...won, record, ...departure.lookup() };
    if (failure === undefined) return { kind: 'renewed', acquisition: renewal };
    if (!this.#unconfirmed.includes(won)) this.#unconfirmed.push(won);
    const failed = this.#classify([renewal, ...this.#unconfirmed], failure.error);
    switch (failed.outcome) {
      case 'applied':
        return { kind: 'renewed', acquisition: failed.write };
      case 'refused':
        return { kind: 'refused', error: failure.error };
      case 'unapplied':
        return { kind: 'kept', acquisition: won };
      case 'unknown':
        this.#unconfirmed.push(renewal);
        return { kind: 'kept', acquisition: { ...won, inDoubt: renewal } };
    }
  }

  /**
   * `record` as it leaves now: for a lock bounded by its holder's end, with a
   * lease that ends by then, counted from this moment (lease-end.ts).
   */
  #bounded(record: LockRecordToWrite): LockRecordToWrite {
    const end = this.#options.leaseEnd;
    return end === undefined ? record : { ...record, leaseDurationMs: end.leaseAt(record.leaseDurationMs, this.#ctx.clock.now()) };
  }

  /** The write of this call whose RVN the item carries, if the item is one this call wrote without learning so. */
  writtenAs(record: LockRecord): Acquisition | undefined {
    if (record.ownerName !== this.#ctx.ownerName || record.isReleased) return undefined;
    return this.#unconfirmed.find((write) => write.record.recordVersionNumber === record.recordVersionNumber);
  }

  /**
   * Sorts the failure of `write`: one of unknown outcome joins the writes the
   * table may hold. Returns the write of this call the failure shows applied
   * (this one, or one remembered before), if any.
   */
  #sortFailure(write: Acquisition, error: unknown): Acquisition | undefined {
    const failed = this.#classify([write, ...this.#unconfirmed], error);
    if (failed.outcome === 'unknown') this.#unconfirmed.push(write);
    return failed.outcome === 'applied' ? failed.write : undefined;
  }

  /** What the failure of the first of `candidates` did, and which of them it shows applied. */
  #classify(
    candidates: readonly Acquisition[],
    error: unknown,
  ): { readonly outcome: 'applied'; readonly write: Acquisition } | { readonly outcome: 'refused' | 'unapplied' | 'unknown' } {
    const failed = classifyFailedWrite(error, {
      ownerName: this.#ctx.ownerName,
      recordVersionNumbers: candidates.map((candidate) => candidate.record.recordVersionNumber),
    });
    if (failed.outcome !== 'applied') return failed;
    const write = candidates.find((candidate) => candidate.record.recordVersionNumber === failed.recordVersionNumber);
    return write === undefined ? { outcome: 'unknown' } : { outcome: 'applied', write };
  }
}
