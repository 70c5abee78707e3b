/**
 * Lock data as a private copy: strings become their UTF-8 bytes; other bytes
 * are copied explicitly (a Buffer's `slice` would share memory). And back:
 * the text of data that is UTF-8.
 */
import { InvalidArgumentError } from '../base/errors.js';

const utf8 = new TextEncoder();
const strictUtf8 = new TextDecoder('utf-8', { fatal: true });

export function toBytes(data: unknown, what = 'data'): Uint8Array | undefined {
  if (data === undefined) return undefined;
  if (typeof data === 'string') return utf8.encode(data);
  if (data instanceof Uint8Array) return new Uint8Array(data);
  throw new InvalidArgumentError(
    'INVALID_OPTION',
    `${what} must be a Uint8Array (or Buffer) or a string, got ${data === null ? 'null' : typeof data}`,
  );
}

/** The text `data` encodes, when it is UTF-8 (as the bytes of a string stored as data are); `undefined` for none or binary data. */
export function textOf(data: Uint8Array | undefined): string | undefined {
  if (data === undefined) return undefined;
  try {
    return strictUtf8.decode(data);
  } catch {
    return undefined;
  }
}
