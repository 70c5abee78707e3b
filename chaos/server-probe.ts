/**
 * How busy DynamoDB Local itself is during a `--load` run: a probe in the
 * runner sends, every 200 ms, what a heartbeat of a busy client sends, a
 * batch of the smallest size heartbeats are batched in (two PartiQL
 * updates), to a table of its own, straight to the server (not through the
 * fault proxy). It writes, not reads: DynamoDB Local applies the writes of
 * every table one at a time, so a server busy with the workers' batches
 * answers reads at once while each heartbeat, a write, waits in line (seen:
 * reads under 200 ms while batches of writes took a second). And it sends a
 * batch, not one write: each statement of a batch waits in that line on its
 * own (seen: after a stopped worker resumed and sent its backlog, two other
 * workers' heartbeat batches went unanswered for a period while single
 * probe writes were answered within 190 ms). A batch that takes longer than
 * a quarter of the heartbeat period, or fails, marks a window in which the
 * server had no capacity to spare; a held lock lost within reach of such a
 * window was lost to a
 * saturated server (on a 2-core machine, three worker processes starting
 * their bursts at once are enough), not to its client's own traffic while
 * the server could answer, which is the promise the run judges. Real
 * DynamoDB spreads writes over partitions; DynamoDB Local cannot, so the
 * windows are reported with the run, and a reader sees how much of it the
 * server spent saturated.
 */
import { BatchExecuteStatementCommand, DynamoDBClient, PutItemCommand, type BatchStatementRequest } from '@aws-sdk/client-dynamodb';
import { createIdKeyedTable } from '../test-kit/data-table.js';
import type { SaturationWindow } from './load-faults.js';

const PROBE_EVERY_MS = 200;
/** The items one probe updates: as many as the smallest heartbeat batch holds. */
const PROBE_ITEMS = ['probe-1', 'probe-2'];
/** A probe write that gets no answer within this long is abandoned (and its whole time marked busy). */
const PROBE_TIMEOUT_MS = 5_000;

export interface ServerProbeReport {
  readonly probes: number;
  /** Probes slower than the threshold, or failed. */
  readonly slow: number;
  readonly slowestMs: number;
  readonly thresholdMs: number;
}

export class ServerProbe {
  readonly #client: DynamoDBClient;
  readonly #tableName: string;
  readonly #thresholdMs: number;
  readonly #windows: SaturationWindow[] = [];
  readonly #stop = new AbortController();
  #probes = 0;
  #slowestMs = 0;
  #running: Promise<void> | undefined;

  /** `tableName`: the probe's own table, created by `start()`. */
  constructor(options: { endpoint: string; tableName: string; thresholdMs: number }) {
    this.#client = new DynamoDBClient({
      endpoint: options.endpoint,
      region: 'us-east-1',
      // DynamoDB Local takes access key ids of letters and digits only.
      credentials: { accessKeyId: 'chaosprobe', secretAccessKey: 'chaos' },
      maxAttempts: 1,
    });
    this.#tableName = options.tableName;
    this.#thresholdMs = options.thresholdMs;
  }

  async start(): Promise<void> {
    await createIdKeyedTable(this.#client, this.#tableName);
    for (const id of PROBE_ITEMS) await this.#client.send(new PutItemCommand({ TableName: this.#tableName, Item: { id: { S: id } } }));
    this.#running ??= this.#loop();
  }

  async stop(): Promise<ServerProbeReport> {
    this.#stop.abort();
    await this.#running;
    this.#client.destroy();
    return { probes: this.#probes, slow: this.#windows.length, slowestMs: Math.round(this.#slowestMs), thresholdMs: this.#thresholdMs };
  }

  /** The windows in which the server was slow to answer. */
  windows(): SaturationWindow[] {
    return [...this.#windows];
  }

  #update(id: string): BatchStatementRequest {
    return { Statement: `UPDATE "${this.#tableName}" SET probes = ? WHERE id = ?`, Parameters: [{ N: String(this.#probes) }, { S: id }] };
  }

  async #loop(): Promise<void> {
    const signal = this.#stop.signal;
    while (!signal.aborted) {
      const fromNs = process.hrtime.bigint();
      let failed: boolean;
      try {
        const { Responses } = await this.#client.send(
          new BatchExecuteStatementCommand({ Statements: PROBE_ITEMS.map((id) => this.#update(id)) }),
          // Its own timeout only: a signal shared by every probe would collect a listener per probe. Stopping waits for the last one.
          { abortSignal: AbortSignal.timeout(PROBE_TIMEOUT_MS) },
        );
        // A statement the server refused (throttled, conflicting) was not applied either.
        failed = (Responses ?? []).some((response) => response.Error !== undefined);
      } catch {
        failed = !signal.aborted;
      }
      const toNs = process.hrtime.bigint();
      const tookMs = Number(toNs - fromNs) / 1e6;
      this.#probes++;
      this.#slowestMs = Math.max(this.#slowestMs, tookMs);
      if (failed || tookMs > this.#thresholdMs) this.#windows.push({ fromNs, toNs });
      await new Promise((resolve) => setTimeout(resolve, PROBE_EVERY_MS));
    }
  }
}
