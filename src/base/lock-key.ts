/**
 * What names one lock: its key. A leaf module, so that every layer, the
 * wire format included, speaks of a lock the same way.
 */

/** The identity of one lock: its partition key value and, on sort-key tables, its sort key value. */
export interface LockKey {
  readonly partitionKey: string;
  readonly sortKey?: string | undefined;
}

/** `"key"` or `"key"/"sort key"`: quoted, so that spaces, slashes and empty strings stay unambiguous. */
export function describeLockKey(key: LockKey): string {
  return key.sortKey === undefined ? JSON.stringify(key.partitionKey) : `${JSON.stringify(key.partitionKey)}/${JSON.stringify(key.sortKey)}`;
}

/** A collision-free in-process identity for (partition key, sort key). */
export function lockId(key: LockKey): string {
  const sk = key.sortKey === undefined ? '-' : `${key.sortKey.length}:${key.sortKey}`;
  return `${key.partitionKey.length}:${key.partitionKey}|${sk}`;
}
