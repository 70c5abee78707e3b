/**
 * The chaos driver on a starved event loop, as on a loaded machine: a
 * restart timer may run before the exit of the worker it replaces is seen.
 * Each exit must still be judged by the process that exited, and stop()
 * must end every process the driver started.
 */
import { expect, it } from '@jest/globals';
import { mkdtemp, readdir, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { fileURLToPath } from 'node:url';
import { ChaosDriver } from '../../chaos/driver.js';
import { isRunning } from '../../test-kit/processes.js';

const IDLE_WORKER = fileURLToPath(new URL('../../test-kit/programs/idle-worker.ts', import.meta.url));

it('takes no kill of its own for a crash, and leaves no worker running after stop()', async () => {
  const logDir = await mkdtemp(join(tmpdir(), 'chaos-driver-test-'));
  try {
    const driver = new ChaosDriver({
      workers: 2,
      seed: 7,
      logDir,
      faultGapMs: [300, 600],
      restartDelayMs: [0, 0],
      workerScript: IDLE_WORKER,
      worker: { endpoint: 'http://127.0.0.1:1', tableName: 't', keys: ['k'], leaseMs: 50, heartbeatMs: 10, pollMs: 10, maxAttempts: undefined },
    });
    // Busy stretches longer than the restart delay: a killed worker's exit then waits behind its restart.
    const starve = setInterval(() => {
      const until = performance.now() + 40;
      while (performance.now() < until);
    }, 10);
    driver.start();
    await sleep(8_000);
    // And on until workers were killed and restarted a few times: a loaded machine starts each one slowly.
    const deadline = performance.now() + 50_000;
    while ((await startedWorkers(logDir)).length <= 4 && performance.now() < deadline) await sleep(250);
    clearInterval(starve);
    await driver.stop();

    expect(driver.crashes).toEqual([]);
    const pids = await startedWorkers(logDir);
    expect(pids.length).toBeGreaterThan(4);
    await sleep(200); // the kernel reaps the last ones
    expect(pids.filter((pid) => isRunning(pid))).toEqual([]);
  } finally {
    await rm(logDir, { recursive: true, force: true });
  }
}, 90_000);

/** The pids of every worker the driver started, from the files it writes them to. */
async function startedWorkers(logDir: string): Promise<number[]> {
  const pids: number[] = [];
  for (const file of await readdir(logDir)) {
    if (file === 'driver.jsonl') continue;
    pids.push(...(await readFile(join(logDir, file), 'utf8')).split('\n').filter(Boolean).map(Number));
  }
  return pids;
}
