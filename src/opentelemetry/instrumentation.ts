/**
 * OpenTelemetry metrics and spans for a LockClient, from outside it: the
 * client's events (heartbeats, losses), its acquire and release calls, and
 * the DynamoDB calls of a wrapped client. Nothing here is loaded unless the
 * application imports `dynamodb-lock/opentelemetry`, so the library costs
 * nothing without it, and `@opentelemetry/api` is an optional peer dependency.
 */
import {
  SpanKind,
  SpanStatusCode,
  trace,
  type Attributes,
  type MeterProvider,
  type Span,
  type Tracer,
  type TracerProvider,
} from '@opentelemetry/api';
import type { DynamoDBSender } from '../settings/options.js';
import { DynamoDBUnavailableError, heldByAnother, LockCurrentlyUnavailableError, LockNotGrantedError } from '../base/errors.js';
import type { Subscription } from '../base/events.js';
import type { Lock, ReleaseLockOptions } from '../lock.js';
import type { LockClient } from '../lock-client.js';
import { LazyInstruments, SCOPE, type Instruments } from './instruments.js';
import { operationOf } from './operation-names.js';

export interface LockClientInstrumentationOptions {
  /** Where the metrics go. @default the global MeterProvider of `@opentelemetry/api`, whenever it is registered */
  readonly meterProvider?: MeterProvider;
  /** Where the spans go. @default the global TracerProvider of `@opentelemetry/api` */
  readonly tracerProvider?: TracerProvider;
}

/** How an acquire call ended, the `dynamodb_lock.outcome` of acquisitions. */
export type AcquireOutcome = 'acquired' | 'not_granted' | 'unavailable' | 'dynamodb_unavailable' | 'aborted' | 'error';

type AcquireLock = LockClient['acquireLock'];
type ReleaseLock = LockClient['releaseLock'];

/**
 * The instruments, shared by every client it instruments.
 *
 * @example
 *   const telemetry = new LockClientInstrumentation();
 *   const locks = new LockClient({ dynamoDB: telemetry.wrapDynamoDB(new DynamoDBClient({})), tableName: 'locks' });
 *   telemetry.instrument(locks);
 */
export class LockClientInstrumentation {
  readonly #tracer: Tracer;
  readonly #instruments: LazyInstruments;

  constructor(options: LockClientInstrumentationOptions = {}) {
    // The API's global TracerProvider is a proxy that follows a later registration; the MeterProvider is looked up lazily.
    this.#tracer = (options.tracerProvider ?? trace.getTracerProvider()).getTracer(SCOPE);
    this.#instruments = new LazyInstruments(options.meterProvider);
  }

  get #metrics(): Instruments {
    return this.#instruments.current;
  }

  /**
   * A DynamoDB client whose calls are counted (`dynamodb_lock.dynamodb.calls`
   * by `rpc.method` and outcome); give it to the LockClient as `dynamoDB`.
   */
  wrapDynamoDB(dynamoDB: DynamoDBSender): DynamoDBSender {
    const instruments = this.#instruments;
    return {
      async send(command, options) {
        const operation = operationOf(command);
        try {
          const output = await dynamoDB.send(command, options);
          instruments.current.dynamoDBCalls.add(1, { 'rpc.method': operation, 'dynamodb_lock.outcome': 'ok' });
          return output;
        } catch (error) {
          const name = error instanceof Error ? error.name : 'unknown';
          instruments.current.dynamoDBCalls.add(1, { 'rpc.method': operation, 'dynamodb_lock.outcome': 'error', 'error.type': name });
          throw error;
        }
      },
    };
  }

  /**
   * Records what `client` does: its events, and its acquire and release
   * calls. It replaces `acquireLock` and `releaseLock` on this instance
   * (`tryAcquireLock`, `withLock` and `close()` go through them) and
   * `release` on each lock acquired since. `dispose()` puts them back and
   * unsubscribes.
   */
  instrument(client: LockClient): Disposable & { dispose(): void } {
    const table: Attributes = { 'dynamodb_lock.table': client.tableName };
    const subscriptions: Subscription[] = [
      client.on('heartbeat', ({ lagMs }) => {
        this.#metrics.heartbeats.add(1, { ...table, 'dynamodb_lock.outcome': 'ok' });
        this.#metrics.heartbeatLag.record(lagMs / 1_000, table);
      }),
      client.on('heartbeatError', ({ error, willRetry }) => {
        const name = error instanceof Error ? error.name : 'unknown';
        this.#metrics.heartbeats.add(1, {
          ...table,
          'dynamodb_lock.outcome': 'error',
          'dynamodb_lock.will_retry': willRetry,
          'error.type': name,
        });
      }),
      client.on('lost', ({ error }) => this.#metrics.losses.add(1, { ...table, 'dynamodb_lock.loss': error.kind })),
      client.on('endangered', () => this.#metrics.endangered.add(1, table)),
    ];

    /** Held locks acquired through the instrumented client, each counted once. */
    const held = new Set<Lock>();
    const track = (lock: Lock): void => {
      if (held.has(lock)) return; // a reentrant acquisition returns the lock already counted
      held.add(lock);
      // Taken off where it was added, should the global MeterProvider change in between.
      const { locksHeld } = this.#metrics;
      locksHeld.add(1, table);
      // lock.release() (and `await using`) call the client's records directly: trace them too.
      Object.assign(lock, { release: (options?: ReleaseLockOptions) => instrumented.releaseLock(lock, options) });
      // The signal aborts once the lock ends, however it ends: released, lost or lapsed.
      lock.signal.addEventListener(
        'abort',
        () => {
          held.delete(lock);
          locksHeld.add(-1, table);
        },
        { once: true },
      );
    };

    const acquireLock: AcquireLock = client.acquireLock.bind(client);
    const releaseLock: ReleaseLock = client.releaseLock.bind(client);
    const instrumented: Pick<LockClient, 'acquireLock' | 'releaseLock'> = {
      acquireLock: (partitionKey, options) =>
        this.#traced(
          'acquire',
          client.tableName,
          partitionKey,
          async (span) => {
            const started = performance.now();
            let outcome: AcquireOutcome = 'error';
            try {
              const lock = await acquireLock(partitionKey, options);
              outcome = 'acquired';
              track(lock);
              return lock;
            } catch (error) {
              outcome = outcomeOf(error, options?.signal);
              throw error;
            } finally {
              const attributes = { ...table, 'dynamodb_lock.outcome': outcome };
              this.#metrics.acquisitions.add(1, attributes);
              this.#metrics.acquireDuration.record((performance.now() - started) / 1_000, attributes);
              span.setAttribute('dynamodb_lock.outcome', outcome);
            }
          },
          isAcquireFailure,
        ),
      releaseLock: (lock, options) =>
        this.#traced('release', client.tableName, lock.partitionKey, async (span) => {
          const released = await releaseLock(lock, options);
          span.setAttribute('dynamodb_lock.released', released);
          return released;
        }),
    };
    Object.assign(client, instrumented);

    let disposed = false;
    const dispose = (): void => {
      if (disposed) return;
      disposed = true;
      for (const subscription of subscriptions) subscription.dispose();
      if (client.acquireLock === instrumented.acquireLock) Reflect.deleteProperty(client, 'acquireLock');
      if (client.releaseLock === instrumented.releaseLock) Reflect.deleteProperty(client, 'releaseLock');
      for (const lock of held) Reflect.deleteProperty(lock, 'release');
    };
    return { dispose, [Symbol.dispose]: dispose };
  }

  /** Runs `work` in a span named `dynamodb-lock <operation>`; an error it throws marks the span failed if `isFailure` says so. */
  async #traced<T>(
    operation: string,
    tableName: string,
    partitionKey: string,
    work: (span: Span) => Promise<T>,
    isFailure: (error: unknown) => boolean = () => true,
  ): Promise<T> {
    return this.#tracer.startActiveSpan(
      `dynamodb-lock ${operation}`,
      {
        kind: SpanKind.INTERNAL,
        attributes: { 'dynamodb_lock.table': tableName, 'dynamodb_lock.partition_key': partitionKey },
      },
      async (span) => {
        try {
          return await work(span);
        } catch (error) {
          if (isFailure(error)) {
            span.recordException(error instanceof Error ? error : String(error));
            span.setStatus({ code: SpanStatusCode.ERROR, message: error instanceof Error ? error.message : String(error) });
          }
          throw error;
        } finally {
          span.end();
        }
      },
    );
  }
}

/** Someone else holding the lock is an answer, not a failure of the call. */
function isAcquireFailure(error: unknown): boolean {
  return !heldByAnother(error);
}

function outcomeOf(error: unknown, signal: AbortSignal | undefined): AcquireOutcome {
  if (error instanceof DynamoDBUnavailableError) return 'dynamodb_unavailable';
  if (error instanceof LockNotGrantedError) return 'not_granted';
  if (error instanceof LockCurrentlyUnavailableError) return 'unavailable';
  if (signal?.aborted) return 'aborted';
  return 'error';
}
