/**
 * A waiter shaped like the Java client's (PROTOCOL.md §5.4): it reads the
 * lock item consistently, times its RVN on its own monotonic clock from the
 * read that first showed it, and, once that RVN has stood unchanged for
 * longer than the lease the item states, takes the lock over with the
 * conditional PutItem the Java client itself recorded. It knows nothing of
 * this library: plain lease watching.
 */
import { GetItemCommand, PutItemCommand, type DynamoDBClient } from '@aws-sdk/client-dynamodb';
import type { JavaScenario } from './java-fixtures.js';
import { javaReadLockItem, javaStaleLockTakeover } from './java-items.js';

/** The key the recorded Java takeover writes. */
export const JAVA_TAKEOVER_KEY = 'lock-1';

export interface JavaTakeover {
  /** The RVN it watched stand still, and the lease it waited for. */
  readonly watchedRvn: string;
  readonly leaseMs: number;
  /** Monotonic time the read that first showed that RVN came back, and the time the takeover was accepted. */
  readonly firstSeenAt: number;
  readonly takenAt: number;
}

/**
 * Watches the item `lock-1` of `tableName` (partition key `key`, Java's
 * default) every `pollMs` until its RVN has stood still for its lease, then
 * takes it over as Java does. Gives up after `timeoutMs`.
 */
export async function takeOverLikeJava(
  dynamoDB: Pick<DynamoDBClient, 'send'>,
  scenarios: readonly JavaScenario[],
  tableName: string,
  { pollMs = 100, timeoutMs = 60_000 }: { pollMs?: number; timeoutMs?: number } = {},
): Promise<JavaTakeover> {
  const start = performance.now();
  let watched: { rvn: string; leaseMs: number; firstSeenAt: number } | undefined;
  while (performance.now() - start < timeoutMs) {
    const { Item: item } = await dynamoDB.send(
      new GetItemCommand({ TableName: tableName, Key: { key: { S: JAVA_TAKEOVER_KEY } }, ConsistentRead: true }),
    );
    const seenAt = performance.now();
    if (item === undefined) throw new Error('the lock item is gone: nothing to take over');
    const view = javaReadLockItem(item, 'key');
    if (watched?.rvn !== view.recordVersionNumber) {
      watched = { rvn: view.recordVersionNumber, leaseMs: Number(view.leaseDuration), firstSeenAt: seenAt };
    } else if (seenAt - watched.firstSeenAt > watched.leaseMs) {
      await dynamoDB.send(new PutItemCommand(javaStaleLockTakeover(scenarios, tableName, watched.rvn)));
      return { watchedRvn: watched.rvn, leaseMs: watched.leaseMs, firstSeenAt: watched.firstSeenAt, takenAt: performance.now() };
    }
    const staleAt = watched.firstSeenAt + watched.leaseMs + 1;
    await new Promise((resolve) => setTimeout(resolve, Math.min(pollMs, Math.max(1, staleAt - seenAt))));
  }
  throw new Error(`no takeover within ${timeoutMs} ms`);
}
