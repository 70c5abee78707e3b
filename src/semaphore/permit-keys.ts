/**
 * How a semaphore's permits are named and marked in the lock table: what a
 * client of another language computes to join one. A semaphore of N
 * permits named NAME is the N ordinary locks whose partition keys are
 * `NAME#permit-1` … `NAME#permit-N`, each with the sort key the caller gives
 * (on a table with a sort key). Each permit this library writes carries the
 * N its writer used, in the attribute `semaphorePermits`.
 */
import { InvalidArgumentError } from '../base/errors.js';
import type { LockKey } from '../base/lock-key.js';
import type { LockRecord } from '../protocol/index.js';

/** The attribute that carries, on each permit, the number of permits its writer's semaphore has. */
export const PERMITS_ATTRIBUTE = 'semaphorePermits';

/** What separates a semaphore's name from a permit's number in the permit's partition key. */
export const PERMIT_INFIX = '#permit-';

/** The key of permit `index` (1 to N) of the semaphore `name`. */
export function permitKey(name: string, index: number, sortKey: string | undefined): LockKey {
  return { partitionKey: `${name}${PERMIT_INFIX}${index}`, sortKey };
}

/** The keys of permits 1 to `count` of the semaphore `name`, in order. */
export function permitKeys(name: string, count: number, sortKey: string | undefined): LockKey[] {
  return Array.from({ length: count }, (_, i) => permitKey(name, i + 1, sortKey));
}

/** Checks a semaphore's name: a non-empty string (the key check of each permit does the rest). */
export function checkSemaphoreName(name: unknown): asserts name is string {
  if (typeof name !== 'string' || name === '') {
    throw new InvalidArgumentError('INVALID_OPTION', `A semaphore's name must be a non-empty string, got ${JSON.stringify(name)}`);
  }
}

/**
 * The number of permits a permit's writer used, as the item carries it:
 * `undefined` when it carries none (a client of another language that did
 * not add it), `NaN` when the attribute holds no whole number.
 */
export function permitsWrittenOn(record: LockRecord): number | undefined {
  const value: unknown = record.additionalAttributes[PERMITS_ATTRIBUTE];
  if (value === undefined) return undefined;
  // A Java joiner that adds the attribute may write it as a number or as its decimal text.
  const text = typeof value === 'number' || typeof value === 'string' ? String(value) : '';
  return /^[1-9]\d*$/.test(text) ? Number(text) : NaN;
}
