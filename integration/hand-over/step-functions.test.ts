/**
 * docs/hand-over.md's Step Functions pattern, run as the platform would run
 * it: each state in a process of its own, the lock passed from one to the
 * next in the state's output as JSON. The doc's snippet is the code of the
 * program the states run (test-kit/programs/order-workflow.ts).
 */
import { describe, expect, it } from '@jest/globals';
import { join } from 'node:path';
import { localEndpoint } from '../../test-kit/aws.js';
import { snippetAgainstProgram } from '../../test-kit/doc-snippets.js';
import { REPO_ROOT, spawnTsx } from '../../test-kit/processes.js';
import { useLockTestBed } from '../../test-kit/jest/lock-test-bed-hook.js';

const WORKFLOW = join(REPO_ROOT, 'test-kit/programs/order-workflow.ts');

const bed = useLockTestBed('step-functions');

/** Runs one state in a process of its own; resolves with its output, parsed. */
async function runState(state: string, input: unknown): Promise<{ output: unknown; stderr: string }> {
  const child = spawnTsx(WORKFLOW, [localEndpoint(), bed.tableName, state, JSON.stringify(input)]);
  let stdout = '';
  let stderr = '';
  child.stdout?.on('data', (chunk: Buffer) => (stdout += chunk.toString('utf8')));
  child.stderr?.on('data', (chunk: Buffer) => (stderr += chunk.toString('utf8')));
  const code = await new Promise<number | null>((resolve) => child.once('close', resolve));
  if (code !== 0) throw new Error(`state ${state} exited with ${code}: ${stderr}`);
  return { output: JSON.parse(stdout) as unknown, stderr };
}

describe("docs/hand-over.md's Step Functions pattern", () => {
  it('is the code the workflow runs', () => {
    const { lines, missing } = snippetAgainstProgram(
      'docs/hand-over.md',
      '## The Step Functions pattern',
      'test-kit/programs/order-workflow.ts',
    );
    expect(lines.length).toBeGreaterThan(10);
    expect(missing).toEqual([]);
  });

  it('holds the lock from the first state to the last, across processes, and frees it at the end', async () => {
    const taken = await runState('takeLock', { orderId: '7' });
    expect(taken.stderr).toContain('reserved stock for 7');
    expect(taken.output).toMatchObject({ orderId: '7', lock: { format: 'dynamodb-lock/hand-off', partitionKey: 'order-7' } });

    // Between the states nobody else takes the order's lock.
    const rival = bed.client({ ownerName: 'rival', leaseDuration: 5_000 });
    expect(await rival.tryAcquireLock('order-7', { shouldSkipBlockingWait: true })).toBeUndefined();

    const shipped = await runState('shipAndRelease', taken.output);
    expect(shipped.stderr).toContain('shipped 7');
    expect(shipped.output).toEqual({ orderId: '7' });
    expect(await bed.item('order-7')).toBeUndefined();
    expect(await rival.tryAcquireLock('order-7', { shouldSkipBlockingWait: true })).toBeDefined();
  });
});
