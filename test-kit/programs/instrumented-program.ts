/**
 * A small application of the OpenTelemetry instrumentation, set up in the
 * order docs/opentelemetry.md shows: the instrumentation first, the global
 * MeterProvider after. integration/opentelemetry.test.ts bundles it with
 * esbuild --minify, as Lambda functions are shipped, and runs the bundle.
 *
 * Usage: node bundle.cjs <table>   (an existing lock table; DYNAMODB_LOCAL_ENDPOINT
 * in the environment)
 * Prints one JSON line: the DynamoDB calls by `rpc.method`, the same calls as
 * the SDK's middleware named them, and the name the library's client class
 * has in this build (to show the bundle was minified).
 */
import { metrics } from '@opentelemetry/api';
import { MeterProvider } from '@opentelemetry/sdk-metrics';
import { LockClient } from '../../src/index.js';
import { LockClientInstrumentation } from '../../src/opentelemetry/index.js';
import { newLocalClient } from '../aws.js';
import { countCalls } from '../call-counter.js';
import { TestMetricReader } from '../metric-reader.js';

// A function, not top-level await: Lambda bundles are usually CommonJS.
async function main(tableName: string): Promise<void> {
  const telemetry = new LockClientInstrumentation();
  const reader = new TestMetricReader();
  metrics.setGlobalMeterProvider(new MeterProvider({ readers: [reader] }));

  const dynamoDB = newLocalClient();
  const reference = countCalls(dynamoDB);
  const locks = new LockClient({ dynamoDB: telemetry.wrapDynamoDB(dynamoDB), tableName, ownerName: 'bundled' });
  try {
    const lock = await locks.acquireLock('bundled');
    await lock.release();
    await locks.tryAcquireLock('bundled', { shouldSkipBlockingWait: true });
  } finally {
    await locks.close();
    dynamoDB.destroy();
  }
  const calls = await reader.sumsBy('dynamodb_lock.dynamodb.calls', 'rpc.method');
  console.log(JSON.stringify({ calls, reference: reference.counts(), libraryClassName: LockClient.name }));
}

const [tableName] = process.argv.slice(2);
if (tableName === undefined) throw new Error('usage: instrumented-program <table>');
main(tableName).catch((error: unknown) => {
  console.error(error);
  process.exitCode = 1;
});
