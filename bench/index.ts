/**
 * `npm run bench -- [acquire] [--cycles N] [--json]`: benchmarks against an
 * embedded DynamoDB Local. Not part of the test suite.
 */
import { parseArgs } from 'node:util';
import { startDynamoDBLocal } from '../integration/support/dynamodb-local.js';
import { benchAcquireRelease } from './acquire-release.js';
import { printRows, type Row } from './report.js';

const BENCHMARKS: Record<string, (endpoint: string, cycles: number) => Promise<Row[]>> = {
  acquire: benchAcquireRelease,
};

const { values, positionals } = parseArgs({
  allowPositionals: true,
  options: { json: { type: 'boolean', default: false }, cycles: { type: 'string', default: '500' } },
});
const names = positionals.length > 0 ? positionals : Object.keys(BENCHMARKS);
const unknown = names.filter((n) => !(n in BENCHMARKS));
if (unknown.length > 0) {
  console.error(`unknown benchmark(s): ${unknown.join(', ')}; available: ${Object.keys(BENCHMARKS).join(', ')}`);
  process.exit(2);
}

const dynamoDBLocal = await startDynamoDBLocal();
try {
  for (const name of names) {
    const run = BENCHMARKS[name] as (endpoint: string, cycles: number) => Promise<Row[]>;
    printRows(await run(dynamoDBLocal.endpoint, Number(values.cycles)), values.json);
  }
} finally {
  await dynamoDBLocal.stop();
}
