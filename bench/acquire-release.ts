/**
 * `npm run bench -- acquire`: dynamodb-lock beside dynamodb-lock-client (the
 * most used Node library, on its own table) against one DynamoDB Local:
 * (a) uncontended acquire + release cycles, (b) contention of worker
 * processes, (c) takeover after the holder is SIGKILLed, and dynamodb-lock
 * alone (d) taking a lock whose holder was killed an hour ago, with and
 * without `clockBound`. Both libraries get
 * the same lease and heartbeat period; see BENCHMARKS.md for results.
 */
import { CLIENTS, VARIANTS, createTables, type LockSettings } from './acquire-clients.js';
import { benchContention, type ContentionShape } from './acquire-contention.js';
import { benchLongDead } from './acquire-long-dead.js';
import { benchTakeover } from './acquire-takeover.js';
import { benchUncontended } from './acquire-uncontended.js';
import { WARM_UP_DESCRIPTION, warmUpServer } from './acquire-warm-up.js';
import type { Row } from './report.js';

export const ACQUIRE_SETTINGS: LockSettings = { leaseMs: 2_000, heartbeatMs: 500, pollMs: 200 };
export const ACQUIRE_SCENARIOS = ['uncontended', 'contention', 'takeover', 'long-dead'] as const;
export type AcquireScenario = (typeof ACQUIRE_SCENARIOS)[number];

/**
 * 8 workers on 1 key run long enough for fairness to be measured: with
 * turns, sections come some 14 at a time, so what evens out is turns, and a
 * worker has about 11 of them in 20 s; the fewest of eight such counts
 * over the most is then mostly chance (each turn to a worker drawn at
 * random scores about 0.42). A minute gives each worker some 40. 32 on 8,
 * whose goal is sections per second, runs shorter.
 */
export const CONTENTION_SHAPES: Readonly<Record<string, ContentionShape>> = {
  '8on1': { workers: 8, keys: 1, durationMs: 60_000 },
  '32on8': { workers: 32, keys: 8, durationMs: 10_000 },
};

export interface AcquireBenchOptions {
  readonly scenarios: readonly AcquireScenario[];
  /** dynamodb-lock's turnLength in ms in its row with turns; `undefined`: one refresh period. */
  readonly turnMs?: number | undefined;
  /** dynamodb-lock's refreshPeriod in ms; `undefined`: ACQUIRE_SETTINGS' 200 ms. */
  readonly pollMs?: number | undefined;
  /** Names in CONTENTION_SHAPES; `undefined`: all. */
  readonly shapes?: readonly string[] | undefined;
  /** Contention runs, each with every variant in turn (the order rotates run by run). */
  readonly runs?: number | undefined;
}
const TAKEOVER_RUNS = 5;

export async function benchAcquireRelease(endpoint: string, cycles: number, options: AcquireBenchOptions): Promise<Row[]> {
  const settings: LockSettings = { ...ACQUIRE_SETTINGS, pollMs: options.pollMs ?? ACQUIRE_SETTINGS.pollMs, turnMs: options.turnMs };
  await createTables(endpoint);
  const rows: Row[] = [];
  const progress = (what: string): void => void process.stderr.write(`acquire bench: ${what}\n`);
  progress(`warming DynamoDB Local up: ${WARM_UP_DESCRIPTION}`);
  await warmUpServer(endpoint, settings);
  if (options.scenarios.includes('uncontended')) {
    progress(`uncontended, ${cycles} cycles per client`);
    rows.push(...(await benchUncontended(endpoint, cycles, settings)));
  }
  if (options.scenarios.includes('contention')) {
    const runs = options.runs ?? 1;
    for (let run = 0; run < runs; run++) {
      for (const name of options.shapes ?? Object.keys(CONTENTION_SHAPES)) {
        const shape = CONTENTION_SHAPES[name];
        if (shape === undefined) throw new Error(`unknown shape ${name}; available: ${Object.keys(CONTENTION_SHAPES).join(', ')}`);
        // Rotated, so that no variant always runs first on a cold JVM or last on a hot machine.
        const variants = VARIANTS.map((_, i) => VARIANTS[(i + run) % VARIANTS.length] as (typeof VARIANTS)[number]);
        for (const variant of variants) {
          progress(`contention run ${run + 1}/${runs}, ${shape.workers} workers on ${shape.keys} keys, ${variant.label}`);
          rows.push(await benchContention(endpoint, variant, shape, settings));
        }
      }
    }
  }
  if (options.scenarios.includes('takeover')) {
    for (const client of CLIENTS) {
      progress(`takeover, ${TAKEOVER_RUNS} runs, ${client}`);
      rows.push(await benchTakeover(endpoint, client, TAKEOVER_RUNS, settings));
    }
  }
  if (options.scenarios.includes('long-dead')) {
    progress(`holder killed an hour ago, ${TAKEOVER_RUNS} runs with and without clockBound`);
    rows.push(...(await benchLongDead(endpoint, TAKEOVER_RUNS, settings)));
  }
  return rows;
}
