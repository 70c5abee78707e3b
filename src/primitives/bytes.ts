/**
 * Lock data as a private copy: strings become their UTF-8 bytes; other bytes
 * are copied explicitly (a Buffer's `slice` would share memory).
 */
import { InvalidArgumentError } from '../base/errors.js';

const utf8 = new TextEncoder();

export function toBytes(data: unknown, what = 'data'): Uint8Array | undefined {
  if (data === undefined) return undefined;
  if (typeof data === 'string') return utf8.encode(data);
  if (data instanceof Uint8Array) return new Uint8Array(data);
  throw new InvalidArgumentError(
    'INVALID_OPTION',
    `${what} must be a Uint8Array (or Buffer) or a string, got ${data === null ? 'null' : typeof data}`,
  );
}
