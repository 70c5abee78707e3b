/**
 * The chaos driver: runs the worker processes and, on a seeded schedule,
 * kills them (SIGKILL), pauses them for longer than the lease (SIGSTOP, then
 * SIGCONT: a stop-the-world pause) and restarts the dead. Every fault is
 * logged with the monotonic instant it was sent.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { appendFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { nowNs, type ProcessEvent } from './events.js';
import { between, pick, seededRandom, type Random } from './random.js';
import type { WorkerConfig } from './worker.js';

const WORKER_SCRIPT = fileURLToPath(new URL('./worker.ts', import.meta.url));
/** At most this many workers are dead or paused at once, so that the keys stay contended. */
const MAX_OUT = 2;
const STDERR_TAIL_CHARS = 2_000;

export interface DriverOptions {
  readonly workers: number;
  readonly seed: number;
  readonly logDir: string;
  /** Everything of a worker's config but its name, seed and log file. */
  readonly worker: Omit<WorkerConfig, 'worker' | 'seed' | 'logFile'>;
  /** Milliseconds between faults. */
  readonly faultGapMs: readonly [number, number];
}

/** A worker that exited without the driver killing it: a crash the run must report. */
export interface WorkerCrash {
  readonly worker: string;
  readonly code: number | null;
  readonly signal: NodeJS.Signals | null;
  readonly stderrTail: string;
}

interface Slot {
  readonly index: number;
  incarnation: number;
  name: string;
  child: ChildProcess | undefined;
  paused: boolean;
  killedByDriver: boolean;
  stderr: string;
}

export class ChaosDriver {
  readonly crashes: WorkerCrash[] = [];
  readonly #options: DriverOptions;
  readonly #random: Random;
  readonly #slots: Slot[] = [];
  readonly #timers = new Set<NodeJS.Timeout>();
  readonly #logFile: string;
  #stopping = false;

  constructor(options: DriverOptions) {
    this.#options = options;
    this.#random = seededRandom(options.seed);
    this.#logFile = join(options.logDir, 'driver.jsonl');
  }

  /** Starts every worker and the fault schedule. */
  start(): void {
    for (let i = 1; i <= this.#options.workers; i++) {
      const slot: Slot = { index: i, incarnation: 0, name: '', child: undefined, paused: false, killedByDriver: false, stderr: '' };
      this.#slots.push(slot);
      this.#spawn(slot);
    }
    this.#scheduleNextFault();
  }

  /** Cancels pending faults and kills every worker (paused ones too); resolves once all have exited. */
  async stop(): Promise<void> {
    this.#stopping = true;
    for (const timer of this.#timers) clearTimeout(timer);
    this.#timers.clear();
    await Promise.all(
      this.#slots.map(async (slot) => {
        const child = slot.child;
        if (child === undefined || child.exitCode !== null || child.signalCode !== null) return;
        const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
        child.kill('SIGKILL'); // also ends a stopped process
        await exited;
      }),
    );
  }

  #log(type: ProcessEvent['type'], slot: Slot): void {
    appendFileSync(this.#logFile, `${JSON.stringify({ type, worker: slot.name, atNs: nowNs() } satisfies ProcessEvent)}\n`);
  }

  #later(ms: number, action: () => void): void {
    const timer = setTimeout(() => {
      this.#timers.delete(timer);
      if (!this.#stopping) action();
    }, ms);
    this.#timers.add(timer);
  }

  #spawn(slot: Slot): void {
    slot.incarnation++;
    slot.name = `w${slot.index}.${slot.incarnation}`;
    slot.killedByDriver = false;
    slot.paused = false;
    slot.stderr = '';
    const config: WorkerConfig = {
      ...this.#options.worker,
      worker: slot.name,
      seed: this.#options.seed * 1_000 + slot.index * 100 + slot.incarnation,
      logFile: join(this.#options.logDir, `${slot.name}.jsonl`),
    };
    const child = spawn(process.execPath, ['--import', 'tsx', WORKER_SCRIPT, JSON.stringify(config)], {
      stdio: ['ignore', 'ignore', 'pipe'],
    });
    child.stderr?.on('data', (chunk: Buffer) => {
      slot.stderr = (slot.stderr + chunk.toString('utf8')).slice(-STDERR_TAIL_CHARS);
    });
    child.once('exit', (code, signal) => {
      if (!slot.killedByDriver && !this.#stopping) {
        this.crashes.push({ worker: slot.name, code, signal, stderrTail: slot.stderr });
        this.#log('kill', slot); // gone all the same: its keys must be taken over
        this.#later(between(this.#random, 200, 1_500), () => this.#spawn(slot));
      }
    });
    slot.child = child;
    this.#log('start', slot);
  }

  #running(): Slot[] {
    return this.#slots.filter((slot) => slot.child !== undefined && slot.child.exitCode === null && slot.child.signalCode === null && !slot.paused);
  }

  #scheduleNextFault(): void {
    this.#later(between(this.#random, ...this.#options.faultGapMs), () => {
      this.#injectFault();
      this.#scheduleNextFault();
    });
  }

  #injectFault(): void {
    const running = this.#running();
    if (this.#slots.length - running.length >= MAX_OUT || running.length === 0) return;
    const slot = pick(this.#random, running);
    const child = slot.child;
    if (child === undefined) return;
    const leaseMs = this.#options.worker.leaseMs;
    if (this.#random() < 0.5) {
      slot.killedByDriver = true;
      child.kill('SIGKILL');
      this.#log('kill', slot);
      this.#later(between(this.#random, 200, 1_500), () => this.#spawn(slot));
    } else {
      child.kill('SIGSTOP');
      slot.paused = true;
      this.#log('stop', slot);
      // Longer than the lease: the paused worker's lock is taken over while it cannot know.
      this.#later(leaseMs + between(this.#random, 200, 1_500), () => {
        child.kill('SIGCONT');
        slot.paused = false;
        this.#log('cont', slot);
      });
    }
  }
}
