/**
 * The acquire benchmark's uncontended scenario runs through against DynamoDB
 * Local, every row of it, and counts the calls BENCHMARKS.md's first goal
 * states: two per acquire + release cycle for dynamodb-lock, three for
 * dynamodb-lock-client. A lock left marked released costs dynamodb-lock a
 * third: the new-lock write goes first and is refused by the item left. A
 * benchmark that fails only when someone sits down to measure is found too
 * late.
 */
import { describe, expect, it } from '@jest/globals';
import { ACQUIRE_SETTINGS } from '../../bench/acquire-release.js';
import { createTables } from '../../bench/acquire-clients.js';
import { benchUncontended } from '../../bench/acquire-uncontended.js';
import { localEndpoint } from '../../test-kit/aws.js';

const CYCLES = 8;

describe('npm run bench -- acquire, uncontended', () => {
  it('runs every row and counts the calls of each cycle', async () => {
    const endpoint = localEndpoint();
    await createTables(endpoint);
    const rows = await benchUncontended(endpoint, CYCLES, ACQUIRE_SETTINGS);
    // With turns, a cycle slower than a turn on a loaded machine stands aside and reads once: not counted exactly.
    const withTurns = rows.find((row) => row.client === 'dynamodb-lock with turns');
    expect(withTurns?.callsPerCycle).toBeGreaterThanOrEqual(2);
    expect(rows.map((row) => [row.client, row.scenario, row.cycles, row === withTurns ? 'not counted' : row.callsPerCycle])).toEqual([
      ['dynamodb-lock', 'uncontended acquire+release', CYCLES, 2],
      ['dynamodb-lock with turns', 'uncontended acquire+release', CYCLES, 'not counted'],
      ['dynamodb-lock-client', 'uncontended acquire+release', CYCLES, 3],
      ['dynamodb-lock', 'uncontended update+delete', CYCLES, 2],
      ['dynamodb-lock', 'uncontended put+markReleased', CYCLES, 3],
      ['dynamodb-lock', 'uncontended update+markReleased', CYCLES, 3],
    ]);
  }, 60_000);
});
