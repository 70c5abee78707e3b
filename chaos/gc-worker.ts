/**
 * The gc worker of a `--gc` run: `collectAbandoned` passes back to back,
 * beside the chaos workers, on the README's client and faulted as they are
 * (paused, its requests delayed, dropped or refused), but never killed.
 *
 * It logs each DeleteItem call the passes send, from before its first
 * attempt to its outcome, so that gc-check.ts can judge every delete against
 * the holds the workers vouched for; and each pass's report. Before each
 * pass it leaves one more item of a holder that stops on purpose (a client
 * that never heartbeats nor releases): every pass has an abandoned item to
 * collect, not only when a kill happened to leave one nobody wanted, and a
 * run whose one such delete lost its reply still sees others succeed.
 */
import type { DeleteItemCommandInput, DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { setTimeout as sleep } from 'node:timers/promises';
import { LockClient } from '../src/index.js';
import { nowNs, type ChaosEvent, type GcDeleteEvent } from './events.js';
import type { WorkerConfig } from './worker.js';

export interface GcWorker {
  readonly config: WorkerConfig;
  /** The worker's client: its passes delete as any user's would. */
  readonly client: LockClient;
  readonly dynamoDB: DynamoDBClient;
  readonly log: (event: ChaosEvent) => void;
}

/** How long a pass may last, in leases: a pass watches for one lease, and reads the table twice. */
const PASS_LEASES = 4;
const RETRY_MS = 100;

export async function collectAbandonedForever(gc: GcWorker): Promise<never> {
  const { config, client, log } = gc;
  logDeletes(gc);
  const stopped = stoppedHolder(gc);
  for (let pass = 1; ; pass++) {
    await leaveStoppedHolder(stopped, `stopped-${config.worker}-${pass}`);
    try {
      const report = await client.collectAbandoned({ maxDuration: config.leaseMs * PASS_LEASES });
      const left: Record<string, number> = {};
      for (const { reason } of report.left) left[reason] = (left[reason] ?? 0) + 1;
      log({ type: 'gcPass', worker: config.worker, deleted: report.deleted.length, left, atNs: nowNs() });
    } catch (error) {
      log({ type: 'gcPass', worker: config.worker, deleted: 0, left: {}, error: (error as Error).name, atNs: nowNs() });
      await sleep(RETRY_MS);
    }
  }
}

/** Logs every DeleteItem the client sends: the instant before its first attempt, and how the call (retries included) ended. */
function logDeletes({ config, dynamoDB, log }: GcWorker): void {
  dynamoDB.middlewareStack.add(
    (next, context) => async (args) => {
      if (context.commandName !== 'DeleteItemCommand') return next(args);
      const input = args.input as DeleteItemCommandInput;
      const key = input.Key?.key?.S ?? '';
      const rvn = input.ExpressionAttributeValues?.[':rvn']?.S ?? '';
      const sentAtNs = nowNs();
      const logged = (outcome: GcDeleteEvent['outcome']): void =>
        log({ type: 'gcDelete', worker: config.worker, key, rvn, sentAtNs, atNs: nowNs(), outcome });
      try {
        const result = await next(args);
        logged('deleted');
        return result;
      } catch (error) {
        const refused = (error as Error).name === 'ConditionalCheckFailedException' && (error as { Item?: unknown }).Item !== undefined;
        logged(refused ? 'taken' : 'other');
        throw error;
      }
    },
    { step: 'initialize', name: 'chaosGcDeletes' },
  );
}

/** A client that will never heartbeat nor release what it takes, as a holder that stopped. */
function stoppedHolder({ config, dynamoDB }: GcWorker): LockClient {
  return new LockClient({
    dynamoDB,
    tableName: config.tableName,
    ownerName: `${config.worker}-stopped`,
    leaseDuration: config.leaseMs,
    backgroundHeartbeats: false,
  });
}

/** Takes a key no worker takes with the stopped holder; tries until it holds it. */
async function leaveStoppedHolder(stopped: LockClient, key: string): Promise<void> {
  for (;;) {
    try {
      await stopped.acquireLock(key);
      return;
    } catch {
      await sleep(RETRY_MS);
    }
  }
}
