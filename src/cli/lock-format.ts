/**
 * How locks are shown: JSON objects for scripts, short text cells for
 * people. Lock data is bytes; it is shown as text when it is valid UTF-8
 * without control characters, else as a hex preview.
 */
import type { LockSnapshot } from '../lock.js';
import { textOf } from '../primitives/bytes.js';
import { hasControlCharacters } from './text-table.js';

/** The fields of a lock every command shows; a `Lock` has them too. */
export type ShownLock = Pick<
  LockSnapshot,
  'partitionKey' | 'sortKey' | 'ownerName' | 'recordVersionNumber' | 'leaseDuration' | 'isReleased' | 'data'
>;

/** A lock in `--json` output. */
export interface LockJson {
  readonly partitionKey: string;
  readonly sortKey: string | null;
  readonly ownerName: string;
  /** Milliseconds. */
  readonly leaseDuration: number;
  readonly recordVersionNumber: string;
  readonly isReleased: boolean;
  /** The data as text when it is valid UTF-8, else null. */
  readonly dataText: string | null;
  /** The data's bytes in base64, null when there is none. */
  readonly dataBase64: string | null;
}

export function lockJson(lock: ShownLock): LockJson {
  return {
    partitionKey: lock.partitionKey,
    sortKey: lock.sortKey ?? null,
    ownerName: lock.ownerName,
    leaseDuration: lock.leaseDuration,
    recordVersionNumber: lock.recordVersionNumber,
    isReleased: lock.isReleased,
    dataText: textOf(lock.data) ?? null,
    dataBase64: lock.data === undefined ? null : Buffer.from(lock.data).toString('base64'),
  };
}

/** At most `max` characters: the text, or `0x…` hex and the size for binary data; empty when there is none. */
export function previewData(data: Uint8Array | undefined, max = 40): string {
  if (data === undefined || data.length === 0) return '';
  const text = textOf(data);
  if (text !== undefined && !hasControlCharacters(text)) {
    // eslint-disable-next-line @typescript-eslint/no-misused-spread -- cut between code points, never inside a surrogate pair
    const chars = [...text];
    return chars.length <= max ? text : `${chars.slice(0, max - 1).join('')}…`;
  }
  const hex = Buffer.from(data.subarray(0, Math.max(1, Math.floor((max - 16) / 2)))).toString('hex');
  return `0x${hex}${data.length * 2 > hex.length ? '…' : ''} (${data.length} bytes)`;
}
