/**
 * The wall-clock stamp of the bounded-clock option (our extension; Java
 * clients never read or write it): one attribute holding the RVN a client
 * wrote and the wall-clock milliseconds at which it wrote it, as
 * `"<rvn> <epoch ms>"`. RVN and time live in one attribute so that no write
 * can change one without the other. A write by a client without the option
 * (a Java heartbeat or takeover) changes the RVN and leaves the stamp as it
 * was, or drops it (Java's PutItem acquisitions): either way the stamp no
 * longer names the item's RVN, and it is void.
 */

/** The attribute that holds the stamp (type `S`). */
export const CLOCK_STAMP_ATTRIBUTE = 'rvnWrittenAt';

const STAMP_PATTERN = /^(\S+) (\d{1,16})$/;

/** The stamp of a write of `recordVersionNumber` at wall-clock `writtenAt` (epoch ms). */
export function formatClockStamp(recordVersionNumber: string, writtenAt: number): string {
  if (!Number.isSafeInteger(writtenAt) || writtenAt < 0) throw new RangeError(`a clock stamp needs whole epoch milliseconds, got ${writtenAt}`);
  return `${recordVersionNumber} ${writtenAt}`;
}

/**
 * When the item's current RVN was written, by the stamp stored beside it
 * (`undefined`: no stamp, a stamp naming another RVN, or text that is no stamp).
 */
export function stampedWriteTime(stamp: string | undefined, recordVersionNumber: string): number | undefined {
  const parts = stamp === undefined ? null : STAMP_PATTERN.exec(stamp);
  if (parts === null || parts[1] !== recordVersionNumber) return undefined;
  const writtenAt = Number(parts[2]);
  return Number.isSafeInteger(writtenAt) ? writtenAt : undefined;
}
