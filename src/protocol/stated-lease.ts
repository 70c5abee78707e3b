/**
 * Where a lock write's request states its lease, in the JSON form DynamoDB
 * receives (the same shape as the SDK command's input): the item's
 * `leaseDuration` (PutItem), or the value an UpdateExpression sets it to,
 * alone or as a member of a transaction (a fenced acquisition). Used to state the lease again as a retry of
 * the same request leaves (dynamodb/lease-restatement.ts). Pure.
 */
import { LockAttribute } from './attributes.js';
import { formatLeaseDuration } from './codec.js';

type Json = Record<string, unknown>;

/** Sets every lease `request` states to `leaseMs`, in place; false when it states none. */
export function restateLease(request: unknown, leaseMs: number): boolean {
  const stated = { S: formatLeaseDuration(leaseMs) };
  let found = false;
  for (const write of writesIn(request)) {
    const item = objectAt(write, 'Item');
    if (item?.[LockAttribute.leaseDuration] !== undefined) {
      item[LockAttribute.leaseDuration] = stated;
      found = true;
    }
    const values = objectAt(write, 'ExpressionAttributeValues');
    const placeholder = leaseValuePlaceholder(write);
    if (values !== undefined && placeholder !== undefined && values[placeholder] !== undefined) {
      values[placeholder] = stated;
      found = true;
    }
  }
  return found;
}

/** The single writes of `request`: itself, or the Put and Update members of a transaction. */
function writesIn(request: unknown): Json[] {
  if (!isObject(request)) return [];
  const members = request['TransactItems'];
  if (!Array.isArray(members)) return [request];
  return members.flatMap((member: unknown) => {
    if (!isObject(member)) return [];
    return [objectAt(member, 'Put'), objectAt(member, 'Update')].filter((write) => write !== undefined);
  });
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
