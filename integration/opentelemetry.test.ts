/**
 * dynamodb-lock/opentelemetry: the numbers it records for a real run on
 * DynamoDB Local, checked against what the run did (the client's own events
 * and an independent count of the DynamoDB calls on the SDK's middleware).
 */
import { afterEach, describe, expect, it } from '@jest/globals';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { metrics, SpanStatusCode, trace } from '@opentelemetry/api';
import { MeterProvider, type Histogram } from '@opentelemetry/sdk-metrics';
import { BasicTracerProvider, InMemorySpanExporter, SimpleSpanProcessor } from '@opentelemetry/sdk-trace-base';
import { LockClient } from '../src/index.js';
import { LockClientInstrumentation } from '../src/opentelemetry/index.js';
import { countCalls } from '../test-kit/call-counter.js';
import { useLockTestBed } from '../test-kit/jest/lock-test-bed-hook.js';
import { TestMetricReader } from '../test-kit/metric-reader.js';
import { sh } from '../test-kit/packed-package.js';
import { REPO_ROOT } from '../test-kit/processes.js';
import { deleteLockItem } from '../test-kit/tamper.js';
import { sleep, waitUntil } from '../test-kit/test-locks.js';
import { LIVE_LEASE_MS } from '../test-kit/live-lease.js';

const LEASE = 1_000;
const HEARTBEAT = 250;
const bed = useLockTestBed('otel');

describe('LockClientInstrumentation', () => {
  it('counts acquisitions, locks held, heartbeats, losses and DynamoDB calls, and traces acquire and release', async () => {
    const reader = new TestMetricReader();
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
      leaseDuration: LIVE_LEASE_MS,
      heartbeatPeriod: HEARTBEAT,
    });
    const instrumentation = telemetry.instrument(client);
    let heartbeats = 0;
    let lags = 0;
    client.on('heartbeat', ({ lagMs }) => {
      heartbeats++;
      lags += lagMs / 1_000;
    });
    const other = bed.client({ ownerName: 'other', leaseDuration: LIVE_LEASE_MS, heartbeatPeriod: HEARTBEAT });

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

describe('LockClientInstrumentation with the global MeterProvider', () => {
  afterEach(() => {
    metrics.disable();
    trace.disable();
  });

  it.each(['before', 'after'])('records into a global MeterProvider registered %s the instrumentation is constructed', async (order) => {
    const reader = new TestMetricReader();
    const meterProvider = new MeterProvider({ readers: [reader] });
    if (order === 'before') metrics.setGlobalMeterProvider(meterProvider);
    const telemetry = new LockClientInstrumentation();
    if (order === 'after') metrics.setGlobalMeterProvider(meterProvider);

    const client = new LockClient({ dynamoDB: telemetry.wrapDynamoDB(bed.dynamoDBClient('global')), tableName: bed.tableName });
    const instrumentation = telemetry.instrument(client);
    try {
      await (await client.acquireLock('global')).release();
    } finally {
      await client.close();
      instrumentation.dispose();
    }
    expect(await reader.sum('dynamodb_lock.acquisitions', { 'dynamodb_lock.outcome': 'acquired' })).toBe(1);
    expect(await reader.sum('dynamodb_lock.dynamodb.calls', { 'rpc.method': 'PutItem' })).toBe(1);
    await meterProvider.shutdown();
  });

  it('names DynamoDB operations by their command in a bundle minified with esbuild', async () => {
    const directory = await mkdtemp(join(tmpdir(), 'dynamodb-lock-bundle-'));
    try {
      const bundle = join(directory, 'program.cjs');
      const entry = join(REPO_ROOT, 'test-kit', 'programs', 'instrumented-program.ts');
      const esbuild = join(REPO_ROOT, 'node_modules', '.bin', 'esbuild');
      await sh(esbuild, [entry, '--bundle', '--minify', '--platform=node', '--format=cjs', `--outfile=${bundle}`, '--log-level=warning'], {
        cwd: REPO_ROOT,
      });
      const output = await sh(process.execPath, [bundle, bed.tableName], { cwd: directory });
      const result = JSON.parse(output.trim().split('\n').pop()!) as {
        calls: Record<string, number>;
        reference: Record<string, number>;
        libraryClassName: string;
      };
      // Minified indeed (older SDKs keep their own class names whatever the bundler does; ours are renamed).
      expect(result.libraryClassName).not.toBe('LockClient');
      expect(result.reference).toEqual({ DescribeTable: 1, PutItem: 2, DeleteItem: 2 });
      expect(result.calls).toEqual(result.reference);
    } finally {
      await rm(directory, { recursive: true, force: true });
    }
  }, 120_000);
});
