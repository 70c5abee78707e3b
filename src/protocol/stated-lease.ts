/**
 * Where a lock write's request states its lease, in the JSON form DynamoDB
 * receives (the same shape as the SDK command's input): the item's
 * `leaseDuration` (PutItem), or the value an UpdateExpression sets it to. Used to state the lease again as a retry of
 * the same request leaves (dynamodb/lease-restatement.ts). Pure.
 */
import { LockAttribute } from './attributes.js';
import { formatLeaseDuration } from './codec.js';

type Json = Record<string, unknown>;

/** Sets the lease a PutItem or UpdateItem `request` states to `leaseMs`, in place; false when it states none. */
export function restateLease(request: unknown, leaseMs: number): boolean {
  if (!isObject(request)) return false;
  const stated = { S: formatLeaseDuration(leaseMs) };
  const item = objectAt(request, 'Item');
  if (item?.[LockAttribute.leaseDuration] !== undefined) {
    item[LockAttribute.leaseDuration] = stated;
    return true;
  }
  const values = objectAt(request, 'ExpressionAttributeValues');
  const placeholder = leaseValuePlaceholder(request);
  if (values === undefined || placeholder === undefined || values[placeholder] === undefined) return false;
  values[placeholder] = stated;
  return true;
}

/** The value placeholder an update's `SET` assigns to `leaseDuration` (`#ld = :ld`, `#k2 = :v2`), if any. */
function leaseValuePlaceholder(write: Json): string | undefined {
  const update = write['UpdateExpression'];
  const names = objectAt(write, 'ExpressionAttributeNames');
  if (typeof update !== 'string' || names === undefined) return undefined;
  for (const [name, attribute] of Object.entries(names)) {
    if (attribute !== LockAttribute.leaseDuration) continue;
    const assigned = new RegExp(`(?:^|[\\s,])${escaped(name)}\\s*=\\s*(:\\w+)`).exec(update);
    if (assigned?.[1] !== undefined) return assigned[1];
  }
  return undefined;
}

function objectAt(parent: Json, field: string): Json | undefined {
  const value = parent[field];
  return isObject(value) ? value : undefined;
}

function isObject(value: unknown): value is Json {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function escaped(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}
