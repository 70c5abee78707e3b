/**
 * DynamoDB's JSON-over-HTTP wire format (what the Java SDK put on the wire in
 * the recorded fixtures) ⇄ the `AttributeValue` shape of the JavaScript SDK.
 *
 * The only real difference is binary: on the wire `B`/`BS` are base64 strings,
 * in the JavaScript SDK they are `Uint8Array`s.
 */
import type { AttributeValue } from '@aws-sdk/client-dynamodb';

/** One attribute value as it appears in DynamoDB JSON on the wire. */
export interface WireAttributeValue {
  readonly S?: string;
  readonly N?: string;
  readonly B?: string;
  readonly SS?: readonly string[];
  readonly NS?: readonly string[];
  readonly BS?: readonly string[];
  readonly M?: WireItem;
  readonly L?: readonly WireAttributeValue[];
  readonly NULL?: boolean;
  readonly BOOL?: boolean;
}

export type WireItem = Readonly<Record<string, WireAttributeValue>>;

/** Decodes standard, padded base64 and refuses anything that would not round-trip. */
export function base64ToBytes(text: string): Uint8Array {
  const buffer = Buffer.from(text, 'base64');
  if (buffer.toString('base64') !== text) {
    throw new Error(`Not canonical base64: ${JSON.stringify(text)}`);
  }
  // A plain Uint8Array (not a Buffer), like the values our code builds.
  return new Uint8Array(buffer);
}

export function bytesToBase64(bytes: Uint8Array): string {
  return Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString('base64');
}

export const utf8Bytes = (text: string): Uint8Array => new TextEncoder().encode(text);
export const utf8Text = (bytes: Uint8Array): string => new TextDecoder('utf-8', { fatal: true }).decode(bytes);

/** The single type tag of a wire value (`S`, `B`, `M`, …); throws unless there is exactly one. */
export function wireTypeOf(value: WireAttributeValue): keyof WireAttributeValue {
  const tags = Object.keys(value) as (keyof WireAttributeValue)[];
  if (tags.length !== 1 || tags[0] === undefined) {
    throw new Error(`An attribute value must have exactly one type, got ${JSON.stringify(value)}`);
  }
  return tags[0];
}

export function fromWireValue(value: WireAttributeValue): AttributeValue {
  const tag = wireTypeOf(value);
  switch (tag) {
    case 'S':
      return { S: value.S as string };
    case 'N':
      return { N: value.N as string };
    case 'B':
      return { B: base64ToBytes(value.B as string) };
    case 'SS':
      return { SS: [...(value.SS as string[])] };
    case 'NS':
      return { NS: [...(value.NS as string[])] };
    case 'BS':
      return { BS: (value.BS as string[]).map(base64ToBytes) };
    case 'M':
      return { M: fromWireItem(value.M as WireItem) };
    case 'L':
      return { L: (value.L as WireAttributeValue[]).map(fromWireValue) };
    case 'NULL':
      return { NULL: value.NULL as boolean };
    case 'BOOL':
      return { BOOL: value.BOOL as boolean };
  }
}

export function fromWireItem(item: WireItem): Record<string, AttributeValue> {
  const converted: Record<string, AttributeValue> = {};
  for (const [name, value] of Object.entries(item)) converted[name] = fromWireValue(value);
  return converted;
}

/** Request fields whose content is attribute values (items, keys, expression values). */
const ITEM_FIELDS = ['Item', 'Key', 'ExpressionAttributeValues', 'ExclusiveStartKey'] as const;

/**
 * A recorded request body in the shape of the JavaScript SDK's command input:
 * the same fields, with every attribute map converted by {@link fromWireItem}.
 */
export function fromWireRequest(body: Readonly<Record<string, unknown>>): Record<string, unknown> {
  const input: Record<string, unknown> = { ...body };
  for (const field of ITEM_FIELDS) {
    const value = input[field];
    if (value !== undefined) input[field] = fromWireItem(value as WireItem);
  }
  return input;
}
