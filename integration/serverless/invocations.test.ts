/**
 * Handlers run as AWS Lambda runs them (test-kit/lambda-runner.ts): one
 * child process per execution environment, its module-scope lock client
 * serving invocation after invocation, frozen (SIGSTOP) between or during
 * them, killed (SIGKILL) at a deadline. A frozen holder comes back with its
 * locks lost and writes nothing more; a holder killed at its deadline passes
 * its bounded lock on about its last lease's remaining time later, not a
 * configured lease; and examples/lambda-handler.ts works as users copy it.
 * (A process that returns from main while its client is open exits by
 * itself: integration/heartbeat/process-exit.test.ts; here, after
 * invocations of bounded locks.)
 */
import { afterEach, describe, expect, it } from '@jest/globals';
import { fileURLToPath } from 'node:url';
import { cliEnvironment } from '../../test-kit/cli-process.js';
import { createDataTable, dataItem } from '../../test-kit/data-table.js';
import { useLockTestBed } from '../../test-kit/jest/lock-test-bed-hook.js';
import { LambdaRunner } from '../../test-kit/lambda-runner.js';
import { isRunning } from '../../test-kit/processes.js';
import { sleep } from '../../test-kit/test-locks.js';

const bed = useLockTestBed('lambda');
const HOLDING_HANDLER = fileURLToPath(new URL('../../test-kit/programs/holding-handler.ts', import.meta.url));
const EXAMPLE_HANDLER = 'examples/lambda-handler.ts';
/** Lambda's kill overrun, the default of `invocationDeadline.killOverrunMs`. */
const KILL_OVERRUN_MS = 2_000;
/** Room for a poll, a write and a loaded machine. */
const SLACK_MS = 3_000;

const environments: LambdaRunner[] = [];
afterEach(() => {
  for (const environment of environments.splice(0)) environment.kill();
});

/** A warm execution environment for `handler`, configured like the example's (the AWS environment, LOCK_TABLE, ...). */
async function environment(handler: string, env: NodeJS.ProcessEnv): Promise<LambdaRunner> {
  const runner = new LambdaRunner(handler, { ...cliEnvironment({ endpointFromEnv: true }), LOCK_TABLE: bed.tableName, ...env });
  environments.push(runner);
  await runner.next((line) => line.event === 'ready');
  return runner;
}

describe('an execution environment frozen while it holds locks, for longer than their lease', () => {
  it('gets them back lost, writes them no more, and serves the next invocation with its module-scope client', async () => {
    const holder = await environment(HOLDING_HANDLER, { LEASE_MS: '2000', HEARTBEAT_MS: '500' });
    const first = holder.invoke({ keys: ['a', 'b'], holdMs: 4_000, bounded: true }, 60_000);
    await holder.next((line) => line.event === 'holding');
    holder.freeze();
    await sleep(3_000);
    const frozenItems = [await bed.rvn('a'), await bed.rvn('b')];
    holder.thaw();

    expect((await first).line).toMatchObject({
      event: 'returned',
      result: { held: [false, false], aborted: [true, true], kinds: ['expired', 'expired'] },
    });
    await sleep(1_000); // two heartbeat periods: a heartbeat that resurrected them would have been written by now
    expect([await bed.rvn('a'), await bed.rvn('b')]).toEqual(frozenItems);

    const next = await holder.invoke({ keys: ['a', 'b'], holdMs: 0, bounded: true }, 60_000);
    expect(next.line).toMatchObject({ event: 'returned', pid: holder.child.pid, result: { held: [true, true], aborted: [false, false] } });
  }, 60_000);
});

describe('an invocation killed at its deadline while it holds a bounded lock', () => {
  it('leaves it to the next invocation about the remaining lease of its last write later, not the configured lease', async () => {
    // A lease of 20 s (margin 2 s), heartbeats every second: the last write states at most 2 + 1 + 2 s.
    const settings = { LEASE_MS: '20000', HEARTBEAT_MS: '1000' };
    const [dying, next] = await Promise.all([environment(HOLDING_HANDLER, settings), environment(HOLDING_HANDLER, settings)]);
    const timedOut = dying.invoke({ keys: ['job'], holdMs: 60_000, bounded: true }, 5_000, { killAtDeadline: true });
    await dying.next((line) => line.event === 'holding');
    const killed = await timedOut;
    expect(killed.line.event).toBe('killed');

    const taken = await next.invoke({ keys: ['job'], holdMs: 0, bounded: true }, 60_000);
    expect(taken.line).toMatchObject({ event: 'returned', result: { held: [true] } });
    expect(taken.at - killed.at).toBeLessThan(2_000 + 1_000 + KILL_OVERRUN_MS + SLACK_MS);
  }, 60_000);
});

describe('examples/lambda-handler.ts', () => {
  it('runs one job at a time across environments, serves frozen and thawed invocations, and lets its environment exit', async () => {
    const dataTable = await createDataTable(bed.raw, 'jobs');
    const settings = { DATA_TABLE: dataTable, LEASE_MS: '20000' };
    const [one, two] = await Promise.all([environment(EXAMPLE_HANDLER, settings), environment(EXAMPLE_HANDLER, settings)]);
    const together = await Promise.all([one.invoke({ job: 'report', workMs: 300 }, 10_000), two.invoke({ job: 'report', workMs: 300 }, 10_000)]);
    for (const { line } of together) expect(line).toMatchObject({ event: 'returned', result: { job: 'report', done: true } });
    // The second waited for the first: their locks never overlapped.
    const locked = [...one.lines, ...two.lines].filter((line) => line.event === 'locked');
    expect(new Set(locked.map((line) => line['rvn'])).size).toBe(2);

    one.freeze();
    await sleep(1_000);
    one.thaw();
    expect((await one.invoke({ job: 'report', workMs: 10 }, 10_000)).line).toMatchObject({ event: 'returned', result: { done: true } });
    expect((await dataItem(bed.raw, dataTable, 'report'))?.['runs']?.N).toBe('3');
    expect(await bed.item('report')).toBeUndefined();

    // The module-scope client was never closed; nothing of the library keeps the environment alive.
    one.end();
    expect(await one.exited).toEqual({ code: 0, signal: null });
    expect(isRunning(two.child)).toBe(true);
  }, 90_000);
});
