/**
 * dynamodb-lock/opentelemetry: the numbers it records for a real run on
 * DynamoDB Local, checked against what the run did (the client's own events
 * and an independent count of the DynamoDB calls on the SDK's middleware).
 */
import { describe, expect, it } from '@jest/globals';
import { SpanStatusCode } from '@opentelemetry/api';
import { AggregationTemporality, MeterProvider, MetricReader, type DataPoint, type Histogram } from '@opentelemetry/sdk-metrics';
import { BasicTracerProvider, InMemorySpanExporter, SimpleSpanProcessor } from '@opentelemetry/sdk-trace-base';
import { LockClient } from '../src/index.js';
import { LockClientInstrumentation } from '../src/opentelemetry/index.js';
import { countCalls } from '../test-kit/call-counter.js';
import { useLockTestBed } from '../test-kit/jest/lock-test-bed-hook.js';
import { deleteLockItem } from '../test-kit/tamper.js';
import { sleep, waitUntil } from '../test-kit/test-locks.js';

/** Reads the meter provider's current values on demand. */
class TestReader extends MetricReader {
  constructor() {
    super({ aggregationTemporalitySelector: () => AggregationTemporality.CUMULATIVE });
  }
  protected override async onForceFlush(): Promise<void> {}
  protected override async onShutdown(): Promise<void> {}

  /** Every data point of `name`, with its attributes. */
  async points(name: string): Promise<DataPoint<number | Histogram>[]> {
    const { resourceMetrics } = await this.collect();
    return resourceMetrics.scopeMetrics.flatMap((scope) =>
      scope.metrics.filter((m) => m.descriptor.name === name).flatMap((m) => m.dataPoints as DataPoint<number | Histogram>[]),
    );
  }

  /** The sum of `name`'s points whose attributes include `match`. */
  async sum(name: string, match: Record<string, unknown> = {}): Promise<number> {
    const points = await this.points(name);
    return points
      .filter((point) => Object.entries(match).every(([key, value]) => point.attributes[key] === value))
      .reduce((total, point) => total + (typeof point.value === 'number' ? point.value : point.value.count), 0);
  }
}

const LEASE = 1_000;
const HEARTBEAT = 250;
const bed = useLockTestBed('otel');

describe('LockClientInstrumentation', () => {
  it('counts acquisitions, locks held, heartbeats, losses and DynamoDB calls, and traces acquire and release', async () => {
    const reader = new TestReader();
    const meterProvider = new MeterProvider({ readers: [reader] });
    const spans = new InMemorySpanExporter();
    const tracerProvider = new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(spans)] });
    const telemetry = new LockClientInstrumentation({ meterProvider, tracerProvider });

    const raw = bed.dynamoDBClient('instrumented');
    const reference = countCalls(raw); // the SDK's own middleware, independent of the wrapper
    const client = new LockClient({
      dynamoDB: telemetry.wrapDynamoDB(raw),
      tableName: bed.tableName,
      ownerName: 'instrumented',
      leaseDuration: LEASE,
      heartbeatPeriod: HEARTBEAT,
    });
    const instrumentation = telemetry.instrument(client);
    let heartbeats = 0;
    let lags = 0;
    client.on('heartbeat', ({ lagMs }) => {
      heartbeats++;
      lags += lagMs / 1_000;
    });
    const other = bed.client({ ownerName: 'other', leaseDuration: LEASE, heartbeatPeriod: HEARTBEAT });

    try {
      const a = await client.acquireLock('a');
      const b = await client.acquireLock('b');
      expect(await client.acquireLock('a', { reentrant: true })).toBe(a); // counted as an acquisition, held once
      expect(await reader.sum('dynamodb_lock.locks.held')).toBe(2);
      await client.withLock('c', async () => {
        expect(await reader.sum('dynamodb_lock.locks.held')).toBe(3);
      });

      await other.acquireLock('busy');
      expect(await client.tryAcquireLock('busy', { shouldSkipBlockingWait: true })).toBeUndefined();
      expect(await client.tryAcquireLock('busy', { additionalTimeToWaitForLock: 0, refreshPeriod: 100 })).toBeUndefined();

      await waitUntil('a few heartbeats', () => heartbeats >= 4);
      await deleteLockItem(bed, 'b');
      await waitUntil('b is lost', () => b.signal.aborted);

      await a.release(); // the lock's own release, not the client's
      {
        await using d = await client.acquireLock('d');
        expect(d.state).toBe('held');
      }
      await sleep(HEARTBEAT); // no lock left to heartbeat
    } finally {
      await client.close();
      instrumentation.dispose();
    }

    const acquired = { 'dynamodb_lock.table': bed.tableName, 'dynamodb_lock.outcome': 'acquired' };
    expect(await reader.sum('dynamodb_lock.acquisitions', acquired)).toBe(5); // a, b, a again, c, d
    expect(await reader.sum('dynamodb_lock.acquisitions', { 'dynamodb_lock.outcome': 'unavailable' })).toBe(1);
    expect(await reader.sum('dynamodb_lock.acquisitions', { 'dynamodb_lock.outcome': 'not_granted' })).toBe(1);
    expect(await reader.sum('dynamodb_lock.acquisitions')).toBe(7);
    expect(await reader.sum('dynamodb_lock.acquire.duration')).toBe(7); // one observation per call
    expect(await reader.sum('dynamodb_lock.locks.held')).toBe(0);
    expect(await reader.sum('dynamodb_lock.losses', { 'dynamodb_lock.loss': 'deleted' })).toBe(1);
    expect(await reader.sum('dynamodb_lock.losses')).toBe(1);

    expect(await reader.sum('dynamodb_lock.heartbeats', { 'dynamodb_lock.outcome': 'ok' })).toBe(heartbeats);
    const [lag] = await reader.points('dynamodb_lock.heartbeat.lag');
    expect((lag?.value as Histogram).count).toBe(heartbeats);
    expect((lag?.value as Histogram).sum).toBeCloseTo(lags, 6);

    const calls = reference.counts();
    for (const [operation, count] of Object.entries(calls)) {
      expect([operation, await reader.sum('dynamodb_lock.dynamodb.calls', { 'rpc.method': operation })]).toEqual([operation, count]);
    }
    expect(await reader.sum('dynamodb_lock.dynamodb.calls')).toBe(reference.total());
    expect(calls['PutItem']).toBeGreaterThan(0);

    const finished = spans.getFinishedSpans();
    const named = (name: string) => finished.filter((span) => span.name === name);
    expect(named('dynamodb-lock acquire').map((span) => span.attributes['dynamodb_lock.outcome'])).toEqual([
      'acquired',
      'acquired',
      'acquired',
      'acquired',
      'unavailable',
      'not_granted',
      'acquired',
    ]);
    expect(named('dynamodb-lock acquire').every((span) => span.status.code !== SpanStatusCode.ERROR)).toBe(true); // contention is not an error
    // c by withLock, a by lock.release(), d by await using; b was lost, and close() found nothing left.
    expect(
      named('dynamodb-lock release').map((span) => [span.attributes['dynamodb_lock.partition_key'], span.attributes['dynamodb_lock.released']]),
    ).toEqual([
      ['c', true],
      ['a', true],
      ['d', true],
    ]);
    await meterProvider.shutdown();
    await tracerProvider.shutdown();
  }, 60_000);

  it('after dispose(), the client is as it was', async () => {
    const client = bed.client({ ownerName: 'plain', leaseDuration: LEASE, heartbeatPeriod: HEARTBEAT });
    const acquireLock = client.acquireLock;
    const instrumentation = new LockClientInstrumentation().instrument(client);
    expect(client.acquireLock).not.toBe(acquireLock);
    const lock = await client.acquireLock('x');
    expect(Object.hasOwn(lock, 'release')).toBe(true);
    instrumentation.dispose();
    expect(client.acquireLock).toBe(acquireLock);
    expect(Object.hasOwn(client, 'releaseLock')).toBe(false);
    expect(Object.hasOwn(lock, 'release')).toBe(false);
    expect(await lock.release()).toBe(true);
  });
});
