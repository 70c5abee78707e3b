/**
 * The chaos driver on a starved event loop, as on a loaded machine: a
 * restart timer may run before the exit of the worker it replaces is seen.
 * Each exit must still be judged by the process that exited, and stop()
 * must end every process the driver started. A pause-only slot's worker is
 * paused, never killed.
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

const IDLE_SETTINGS = {
  endpoint: 'http://127.0.0.1:1',
  tableName: 't',
  keys: ['k'],
  leaseMs: 50,
  heartbeatMs: 10,
  pollMs: 10,
  maxAttempts: undefined,
};

/** A driver of two idle workers (they only wait to be killed or paused), restarting a killed one at once. */
function idleDriver(
  logDir: string,
  options: { seed: number; faultGapMs: [number, number]; pauseOnlySlot?: number },
): ChaosDriver<typeof IDLE_SETTINGS> {
  return new ChaosDriver({
    workers: 2,
    ...options,
    logDir,
    restartDelayMs: [0, 0],
    workerScript: IDLE_WORKER,
    worker: IDLE_SETTINGS,
  });
}

it('takes no kill of its own for a crash, and leaves no worker running after stop()', async () => {
  const logDir = await mkdtemp(join(tmpdir(), 'chaos-driver-test-'));
  try {
    const driver = idleDriver(logDir, { seed: 7, faultGapMs: [300, 600] });
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

it('only pauses the worker of its pause-only slot', async () => {
  const logDir = await mkdtemp(join(tmpdir(), 'chaos-driver-test-'));
  try {
    const driver = idleDriver(logDir, { seed: 3, faultGapMs: [50, 100], pauseOnlySlot: 2 });
    driver.start();
    await sleep(4_000);
    await driver.stop();
    const events = (await readFile(join(logDir, 'driver.jsonl'), 'utf8'))
      .split('\n')
      .filter(Boolean)
      .map((line) => JSON.parse(line) as { type: string; worker: string });
    const faultsOf = (slot: string) =>
      events.filter((e) => e.worker.startsWith(`${slot}.`) && ['kill', 'stop'].includes(e.type)).map((e) => e.type);
    expect(faultsOf('w1')).toContain('kill');
    expect(faultsOf('w2')).toContain('stop');
    expect(faultsOf('w2')).not.toContain('kill');
  } finally {
    await rm(logDir, { recursive: true, force: true });
  }
}, 30_000);

/** The pids of every worker the driver started, from the files it writes them to. */
async function startedWorkers(logDir: string): Promise<number[]> {
  const pids: number[] = [];
  for (const file of await readdir(logDir)) {
    if (file === 'driver.jsonl') continue;
    pids.push(...(await readFile(join(logDir, file), 'utf8')).split('\n').filter(Boolean).map(Number));
  }
  return pids;
}
