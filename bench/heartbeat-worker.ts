/**
 * Child process of `npm run bench -- heartbeat`: one measurement per process,
 * so that rows do not share heap, sockets or JIT state. Prints its result as
 * one JSON line on stdout; progress goes to stderr.
 *
 *   node --expose-gc --import tsx bench/heartbeat-worker.ts hold --endpoint URL --locks N [--concurrency C] [--batch-size B]
 *        [--seconds 40] [--lease 20000] [--period 5000] [--acquire-parallelism 128] [--budget-ms MS]
 *   node --expose-gc --import tsx bench/heartbeat-worker.ts limit --endpoint URL [--concurrencies 32,64,128,256]
 *        [--seconds-per-level 2.5] [--sustain-seconds 10] [--items 8192] [--lease 20000] [--budget-ms MS]
 *
 * Add --cpu-prof to the node flags to profile a row.
 *
 * It exits when its stdin closes (the parent died) and when its time budget
 * runs out, so that it never outlives the run that started it.
 */
import { parseArgs } from 'node:util';
import { holdLocks } from './heartbeat-hold.js';
import { measureServerLimit } from './heartbeat-limit.js';

const { values, positionals } = parseArgs({
  allowPositionals: true,
  options: {
    endpoint: { type: 'string' },
    locks: { type: 'string' },
    concurrency: { type: 'string' },
    'batch-size': { type: 'string' },
    seconds: { type: 'string', default: '40' },
    lease: { type: 'string', default: '20000' },
    period: { type: 'string', default: '5000' },
    'acquire-parallelism': { type: 'string', default: '128' },
    concurrencies: { type: 'string', default: '32,64,128,256' },
    'seconds-per-level': { type: 'string', default: '2.5' },
    'sustain-seconds': { type: 'string', default: '10' },
    items: { type: 'string', default: '8192' },
    'budget-ms': { type: 'string', default: '900000' },
    'watch-stdin': { type: 'boolean', default: false },
  },
});

function positive(name: string, text: string | undefined): number {
  const value = Number(text);
  if (text === undefined || !Number.isFinite(value) || value <= 0) throw new Error(`--${name} must be a positive number, got ${text}`);
  return value;
}

const budgetMs = positive('budget-ms', values['budget-ms']);
setTimeout(() => {
  process.stderr.write(`heartbeat bench worker: time budget of ${budgetMs} ms exceeded, exiting\n`);
  process.exit(124);
}, budgetMs).unref();
if (values['watch-stdin']) {
  // The parent holds our stdin open; end of file means it is gone.
  process.stdin.on('end', () => process.exit(130));
  process.stdin.resume();
}

const endpoint = values.endpoint;
if (endpoint === undefined) throw new Error('--endpoint is required');
const lease = positive('lease', values.lease);

let result: unknown;
switch (positionals[0]) {
  case 'hold': {
    const locks = positive('locks', values.locks);
    const seconds = positive('seconds', values.seconds);
    result = await holdLocks({
      endpoint,
      locks,
      concurrency: values.concurrency === undefined ? undefined : positive('concurrency', values.concurrency),
      batchSize: values['batch-size'] === undefined ? undefined : positive('batch-size', values['batch-size']),
      windowSeconds: seconds,
      leaseDuration: lease,
      heartbeatPeriod: positive('period', values.period),
      acquireParallelism: positive('acquire-parallelism', values['acquire-parallelism']),
      acquireTimeoutMs: budgetMs,
    });
    break;
  }
  case 'limit':
    result = await measureServerLimit({
      endpoint,
      concurrencies: (values.concurrencies ?? '').split(',').map((c) => positive('concurrencies', c)),
      secondsPerLevel: positive('seconds-per-level', values['seconds-per-level']),
      sustainSeconds: positive('sustain-seconds', values['sustain-seconds']),
      items: positive('items', values.items),
      leaseDuration: lease,
    });
    break;
  default:
    throw new Error(`first argument must be "hold" or "limit", got ${positionals[0]}`);
}
process.stdout.write(`${JSON.stringify(result)}\n`, () => process.exit(0));
