/**
 * `npm run bench -- [acquire] [--scenarios uncontended,contention,takeover,long-dead] [--shapes 8on1,32on8] [--runs N] [--turn-length MS] [--poll-ms MS] [--cycles N] [--json]`: benchmarks against an
 * embedded DynamoDB Local. Not part of the test suite.
 * `npm run bench -- heartbeat [--locks 1000,10000,40000] [--seconds 40] [--setups default/default,default/1,1/1]`: see bench/heartbeat.ts.
 * `npm run bench -- guarded [--cycles N] [--json]`: guarded writes beside plain ones, fenced acquisitions beside plain ones; see bench/guarded.ts.
 * `npm run bench -- groups [--json]`: two-key transfers, acquireLocks beside two acquireLock calls in a fixed order; see bench/groups.ts.
 * `npm run bench -- many [--locks 10000,40000] [--held 1000] [--waiting 1000] [--rounds 2]`: taking many free locks at once; see bench/acquire-many.ts.
 * `npm run bench -- gc [--items 100000]`: one collectAbandoned pass over a table of abandoned items; see bench/gc.ts.
 * `npm run bench -- semaphore [--json]`: 32 workers on 10 permits, this library's semaphore beside a counter item; see bench/semaphore.ts.
 * `npm run bench -- serverless [--runs N] [--remaining MS]`: a Lambda invocation killed at its deadline, the next one's wait
 *   for its lock with invocationDeadline, the lease alone and clockBound; see bench/serverless.ts.
 * `npm run bench -- floor [--scenarios uncontended,concurrent,heartbeat,batch] [--settings default,...|all] [--cycles N] [--rounds N] [--window S] [--cpu-profile DIR] [--signals] [--json]`:
 *   the library against bare SDK calls sending the same requests, in CPU per cycle; see bench/floor.ts.
 */
import { parseArgs } from 'node:util';
import { startDynamoDBLocal } from '../src/testing/index.js';
import { benchAcquireMany } from './acquire-many.js';
import { ACQUIRE_SCENARIOS, benchAcquireRelease } from './acquire-release.js';
import { FLOOR_SCENARIOS, benchFloor } from './floor.js';
import { benchGc } from './gc.js';
import { benchGroups } from './groups.js';
import { benchGuarded } from './guarded.js';
import { benchHeartbeat, parseList, parseSetups } from './heartbeat.js';
import { benchSemaphore } from './semaphore.js';
import { benchServerless } from './serverless.js';
import { printRows, type Row } from './report.js';

const BENCHMARKS: Record<string, (endpoint: string, cycles: number) => Promise<Row[]>> = {
  acquire: (endpoint, cycles) =>
    benchAcquireRelease(endpoint, cycles, {
      scenarios: values.scenarios === undefined ? ACQUIRE_SCENARIOS : scenariosOf(values.scenarios, ACQUIRE_SCENARIOS),
      turnMs: values['turn-length'] === undefined ? undefined : parseList(values['turn-length'], 'turn-length')[0],
      pollMs: values['poll-ms'] === undefined ? undefined : parseList(values['poll-ms'], 'poll-ms')[0],
      shapes: values.shapes?.split(','),
      runs: values.runs === undefined ? undefined : parseList(values.runs, 'runs')[0],
    }),
  gc: (endpoint) => benchGc(endpoint, values.items === undefined ? undefined : parseList(values.items, 'items')),
  groups: (endpoint) => benchGroups(endpoint),
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
      waiting: values.waiting === undefined ? undefined : parseList(values.waiting, 'waiting')[0],
      rounds: values.rounds === undefined ? undefined : parseList(values.rounds, 'rounds')[0],
    }),
  semaphore: (endpoint) => benchSemaphore(endpoint),
  serverless: (endpoint) =>
    benchServerless(endpoint, {
      runs: values.runs === undefined ? undefined : parseList(values.runs, 'runs')[0],
      remainingMs: values.remaining === undefined ? undefined : parseList(values.remaining, 'remaining')[0],
    }),
  floor: (endpoint) =>
    benchFloor(endpoint, {
      scenarios: values.scenarios === undefined ? FLOOR_SCENARIOS : scenariosOf(values.scenarios, FLOOR_SCENARIOS),
      settings: (values.settings ?? 'default').split(','),
      cycles: Number(values.cycles ?? '3000'),
      rounds: values.rounds === undefined ? 4 : (parseList(values.rounds, 'rounds')[0] as number),
      windowSeconds: values.window === undefined ? 4 : (parseList(values.window, 'window')[0] as number),
      cpuProfileDir: values['cpu-profile'],
      signals: values.signals,
    }),
};

function scenariosOf<Name extends string>(list: string, available: readonly Name[]): Name[] {
  const names = list.split(',');
  const unknown = names.filter((name) => !(available as readonly string[]).includes(name));
  if (unknown.length > 0) throw new Error(`unknown scenario(s): ${unknown.join(', ')}; available: ${available.join(', ')}`);
  return names as Name[];
}

const { values, positionals } = parseArgs({
  allowPositionals: true,
  options: {
    json: { type: 'boolean', default: false },
    cycles: { type: 'string' },
    // heartbeat, many, floor
    locks: { type: 'string' },
    held: { type: 'string' },
    waiting: { type: 'string' },
    rounds: { type: 'string' },
    seconds: { type: 'string' },
    setups: { type: 'string' },
    // gc
    items: { type: 'string' },
    // acquire, floor
    scenarios: { type: 'string' },
    // serverless (and runs)
    remaining: { type: 'string' },
    // acquire
    'turn-length': { type: 'string' },
    'poll-ms': { type: 'string' },
    shapes: { type: 'string' },
    runs: { type: 'string' },
    settings: { type: 'string' },
    window: { type: 'string' },
    'cpu-profile': { type: 'string' },
    signals: { type: 'boolean', default: false },
  },
});
const names = positionals.length > 0 ? positionals : Object.keys(BENCHMARKS);
const unknown = names.filter((n) => !(n in BENCHMARKS));
if (unknown.length > 0) {
  console.error(`unknown benchmark(s): ${unknown.join(', ')}; available: ${Object.keys(BENCHMARKS).join(', ')}`);
  process.exit(2);
}

const dynamoDBLocal = await startDynamoDBLocal({ optimizeFor: 'throughput' });
try {
  for (const name of names) {
    const run = BENCHMARKS[name] as (endpoint: string, cycles: number) => Promise<Row[]>;
    printRows(await run(dynamoDBLocal.endpoint, Number(values.cycles ?? '500')), values.json);
  }
} finally {
  await dynamoDBLocal.stop();
}
