/**
 * How busy DynamoDB Local itself is, for heartbeats, during a `--load` run: a
 * probe in the runner sends, every 200 ms, what a heartbeat of a busy client
 * sends, a batch of the smallest size heartbeats are batched in: two
 * heartbeat statements (the library's own, conditioned on the owner and the
 * RVN) on lock items of its own in the lock table, straight to the server
 * (not through the fault proxy).
 *
 * It sends heartbeats, not some other write: DynamoDB Local answers writes of
 * different shapes at different speeds. In a run of seed 11, in the seconds
 * before held locks were lost, two plain updates in the lock table were
 * answered in 5–15 ms and the same two through the fault proxy in 3–33 ms,
 * while two heartbeat statements took 660–1 030 ms, as long as the workers'
 * own heartbeats did: the time went at the server, on heartbeats. A batch
 * that takes longer than a quarter of the heartbeat period, or fails, marks a
 * window in which the server had no heartbeat capacity to spare. A held lock
 * whose own heartbeat waited at the server through such a window was lost to
 * a saturated server (on a 2-core machine the workers' heartbeats alone fill
 * it), not to its client's own traffic while the server could answer, which
 * is the promise the run judges; a lock lost with no request of its own
 * waiting there counts against the client, however busy the server was.
 * Real DynamoDB spreads writes over partitions; DynamoDB Local cannot, so the
 * windows are reported with the run, and `busyMs` tells a reader how much of
 * it the server spent saturated.
 */
import {
  BatchExecuteStatementCommand,
  DeleteItemCommand,
  DynamoDBClient,
  PutItemCommand,
  type BatchStatementRequest,
  type BatchStatementResponse,
} from '@aws-sdk/client-dynamodb';
import { randomUUID } from 'node:crypto';
import { DEFAULT_PARTITION_KEY_NAME } from '../src/protocol/attributes.js';
import { buildHeartbeatStatement } from '../src/protocol/statements.js';
import type { SaturationWindow } from './load-faults.js';

const PROBE_EVERY_MS = 200;
/** The probe's lock items: as many as the smallest heartbeat batch holds. No worker takes these keys. */
const PROBE_KEYS = ['chaos-probe/1', 'chaos-probe/2'];
const OWNER = 'chaos-probe';
/** A probe write that gets no answer within this long is abandoned (and its whole time marked busy). */
const PROBE_TIMEOUT_MS = 5_000;

export interface ServerProbeReport {
  readonly probes: number;
  /** Probes slower than the threshold, or failed. */
  readonly slow: number;
  /** The slow probes' time added up: how long the server had no heartbeat capacity to spare. */
  readonly busyMs: number;
  readonly slowestMs: number;
  readonly thresholdMs: number;
}

export class ServerProbe {
  readonly #client: DynamoDBClient;
  readonly #tableName: string;
  readonly #thresholdMs: number;
  readonly #windows: SaturationWindow[] = [];
  readonly #stop = new AbortController();
  /** The RVN each probe item holds, as the probe's last answered heartbeat of it wrote or found. */
  readonly #versions = new Map<string, string>();
  readonly #leaseMs: number;
  #probes = 0;
  #busyMs = 0;
  #slowestMs = 0;
  #running: Promise<void> | undefined;

  /** `tableName`: the run's lock table; `leaseMs`: the lease the probe's heartbeats write. */
  constructor(options: { endpoint: string; tableName: string; leaseMs: number; thresholdMs: number }) {
    this.#client = new DynamoDBClient({
      endpoint: options.endpoint,
      region: 'us-east-1',
      // DynamoDB Local takes access key ids of letters and digits only.
      credentials: { accessKeyId: 'chaosprobe', secretAccessKey: 'chaos' },
      maxAttempts: 1,
    });
    this.#tableName = options.tableName;
    this.#leaseMs = options.leaseMs;
    this.#thresholdMs = options.thresholdMs;
  }

  async start(): Promise<void> {
    for (const key of PROBE_KEYS) {
      const version = randomUUID();
      const item = {
        [DEFAULT_PARTITION_KEY_NAME]: { S: key },
        ownerName: { S: OWNER },
        leaseDuration: { S: String(this.#leaseMs) },
        recordVersionNumber: { S: version },
      };
      await this.#client.send(new PutItemCommand({ TableName: this.#tableName, Item: item }));
      this.#versions.set(key, version);
    }
    this.#running ??= this.#loop();
  }

  async stop(): Promise<ServerProbeReport> {
    this.#stop.abort();
    await this.#running;
    // The final scan reads every item left; the probe's own are no run's evidence.
    for (const key of PROBE_KEYS) {
      await this.#client
        .send(new DeleteItemCommand({ TableName: this.#tableName, Key: { [DEFAULT_PARTITION_KEY_NAME]: { S: key } } }))
        .catch(() => undefined);
    }
    this.#client.destroy();
    return {
      probes: this.#probes,
      slow: this.#windows.length,
      busyMs: Math.round(this.#busyMs),
      slowestMs: Math.round(this.#slowestMs),
      thresholdMs: this.#thresholdMs,
    };
  }

  /** The windows in which the server was slow to answer. */
  windows(): SaturationWindow[] {
    return [...this.#windows];
  }

  #heartbeats(next: readonly string[]): BatchStatementRequest[] {
    const table = { tableName: this.#tableName, partitionKeyName: DEFAULT_PARTITION_KEY_NAME };
    return PROBE_KEYS.map((key, i) =>
      buildHeartbeatStatement(
        table,
        { partitionKey: key, ownerName: OWNER, recordVersionNumber: this.#versions.get(key) ?? '' },
        { newRecordVersionNumber: next[i] ?? '', leaseDurationMs: this.#leaseMs },
      ),
    );
  }

  /** Keeps each item's RVN: the one written, or, where the condition failed (an abandoned write was applied after all), the one found. */
  #learn(next: readonly string[], responses: readonly BatchStatementResponse[]): void {
    PROBE_KEYS.forEach((key, i) => {
      const response = responses[i];
      const found = response?.Error?.Item?.recordVersionNumber?.S;
      if (response !== undefined && response.Error === undefined) this.#versions.set(key, next[i] ?? '');
      else if (found !== undefined) this.#versions.set(key, found);
    });
  }

  async #loop(): Promise<void> {
    const signal = this.#stop.signal;
    while (!signal.aborted) {
      const fromNs = process.hrtime.bigint();
      const next = PROBE_KEYS.map(() => randomUUID());
      let failed: boolean;
      try {
        const { Responses = [] } = await this.#client.send(
          new BatchExecuteStatementCommand({ Statements: this.#heartbeats(next) }),
          // Its own timeout only: a signal shared by every probe would collect a listener per probe. Stopping waits for the last one.
          { abortSignal: AbortSignal.timeout(PROBE_TIMEOUT_MS) },
        );
        // A statement the server refused (throttled, conflicting) was not applied either.
        failed = Responses.some((response) => response.Error !== undefined);
        this.#learn(next, Responses);
      } catch {
        failed = !signal.aborted;
      }
      const toNs = process.hrtime.bigint();
      const tookMs = Number(toNs - fromNs) / 1e6;
      this.#probes++;
      this.#slowestMs = Math.max(this.#slowestMs, tookMs);
      if (failed || tookMs > this.#thresholdMs) {
        this.#windows.push({ fromNs, toNs });
        this.#busyMs += tookMs;
      }
      await new Promise((resolve) => setTimeout(resolve, PROBE_EVERY_MS));
    }
  }
}
