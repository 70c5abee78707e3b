/**
 * `npm run bench -- [acquire] [--cycles N] [--json]`: benchmarks against an
 * embedded DynamoDB Local. Not part of the test suite.
 * `npm run bench -- heartbeat [--locks 1000,10000,40000] [--seconds 40] [--setups default/default,default/1,1/1]`: see bench/heartbeat.ts.
 * `npm run bench -- guarded [--cycles N] [--json]`: guarded writes beside plain ones, fenced acquisitions beside plain ones; see bench/guarded.ts.
 * `npm run bench -- many [--locks 10000,40000] [--held 1000] [--rounds 2]`: taking many free locks at once; see bench/acquire-many.ts.
 */
import { parseArgs } from 'node:util';
import { startDynamoDBLocal } from '../src/testing/index.js';
import { benchAcquireMany } from './acquire-many.js';
import { benchAcquireRelease } from './acquire-release.js';
import { benchGuarded } from './guarded.js';
import { benchHeartbeat, parseList, parseSetups } from './heartbeat.js';
import { printRows, type Row } from './report.js';

const BENCHMARKS: Record<string, (endpoint: string, cycles: number) => Promise<Row[]>> = {
  acquire: benchAcquireRelease,
  guarded: benchGuarded,
  heartbeat: (endpoint) =>
    benchHeartbeat(endpoint, {
      locks: values.locks === undefined ? undefined : parseList(values.locks, 'locks'),
      seconds: values.seconds === undefined ? undefined : parseList(values.seconds, 'seconds')[0],
      setups: values.setups === undefined ? undefined : parseSetups(values.setups),
    }),
  many: (endpoint) =>
    benchAcquireMany(endpoint, {
      locks: values.locks === undefined ? undefined : parseList(values.locks, 'locks'),
      held: values.held === undefined ? undefined : parseList(values.held, 'held')[0],
      rounds: values.rounds === undefined ? undefined : parseList(values.rounds, 'rounds')[0],
    }),
};

const { values, positionals } = parseArgs({
  allowPositionals: true,
  options: {
    json: { type: 'boolean', default: false },
    cycles: { type: 'string', default: '500' },
    // heartbeat, many
    locks: { type: 'string' },
    held: { type: 'string' },
    rounds: { type: 'string' },
    seconds: { type: 'string' },
    setups: { type: 'string' },
  },
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
