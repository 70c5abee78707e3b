/** Lock data as a private copy: strings become their UTF-8 bytes; a Buffer's `slice` would share memory, so copy explicitly. */
const utf8 = new TextEncoder();

export function toBytes(data: Uint8Array | string | undefined): Uint8Array | undefined {
  if (data === undefined) return undefined;
  return typeof data === 'string' ? utf8.encode(data) : new Uint8Array(data);
}
