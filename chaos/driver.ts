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

const WORKER_SCRIPT = fileURLToPath(new URL('./worker.ts', import.meta.url));
/** At most this many workers are dead or paused at once, so that the keys stay contended. */
const MAX_OUT = 2;
const STDERR_TAIL_CHARS = 2_000;

/** What the driver adds to the settings it passes every worker program. */
export interface WorkerIdentity {
  /** `w<slot>.<incarnation>`. */
  readonly worker: string;
  /** From 1; a restarted worker keeps its slot. */
  readonly slot: number;
  readonly seed: number;
  /** JSON lines are appended here, synchronously, so a SIGKILL loses nothing already acted on. */
  readonly logFile: string;
}

export interface DriverOptions<Settings extends { readonly leaseMs: number }> {
  readonly workers: number;
  readonly seed: number;
  readonly logDir: string;
  /** Every worker's settings; each also gets its {@link WorkerIdentity}. */
  readonly worker: Settings;
  /** Milliseconds between faults. */
  readonly faultGapMs: readonly [number, number];
  /** Milliseconds before a dead worker is started again. @default [200, 1500] */
  readonly restartDelayMs?: readonly [number, number];
  /** A slot whose worker is only ever paused, never killed (its faults are pauses, so that its work survives them). */
  readonly pauseOnlySlot?: number | undefined;
  /** The worker program, run with `node --import tsx`. @default chaos/worker.ts */
  readonly workerScript?: string;
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
  /** The slot's current worker; an earlier one may still be exiting. */
  child: ChildProcess | undefined;
  paused: boolean;
}

export class ChaosDriver<Settings extends { readonly leaseMs: number }> {
  readonly crashes: WorkerCrash[] = [];
  readonly #options: DriverOptions<Settings>;
  readonly #random: Random;
  readonly #slots: Slot[] = [];
  readonly #timers = new Set<NodeJS.Timeout>();
  /** Every worker process not yet exited, whichever slot it was started for. */
  readonly #alive = new Set<ChildProcess>();
  /** Workers the driver killed: their exit is no crash. Kept per process, as a restart may come before the exit. */
  readonly #killed = new WeakSet<ChildProcess>();
  readonly #logFile: string;
  #stopping = false;

  constructor(options: DriverOptions<Settings>) {
    this.#options = options;
    this.#random = seededRandom(options.seed);
    this.#logFile = join(options.logDir, 'driver.jsonl');
  }

  /** Starts every worker and the fault schedule. */
  start(): void {
    for (let i = 1; i <= this.#options.workers; i++) {
      const slot: Slot = { index: i, incarnation: 0, name: '', child: undefined, paused: false };
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
      [...this.#alive].map(async (child) => {
        const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
        this.#killed.add(child);
        child.kill('SIGKILL'); // also ends a stopped process
        await exited;
      }),
    );
  }

  #log(type: ProcessEvent['type'], worker: string): void {
    appendFileSync(this.#logFile, `${JSON.stringify({ type, worker, atNs: nowNs() } satisfies ProcessEvent)}\n`);
  }

  #later(ms: number, action: () => void): void {
    const timer = setTimeout(() => {
      this.#timers.delete(timer);
      if (!this.#stopping) action();
    }, ms);
    this.#timers.add(timer);
  }

  #restartLater(slot: Slot): void {
    this.#later(between(this.#random, ...(this.#options.restartDelayMs ?? [200, 1_500])), () => this.#spawn(slot));
  }

  #spawn(slot: Slot): void {
    slot.incarnation++;
    slot.name = `w${slot.index}.${slot.incarnation}`;
    slot.paused = false;
    const config: Settings & WorkerIdentity = {
      ...this.#options.worker,
      worker: slot.name,
      slot: slot.index,
      seed: this.#options.seed * 1_000 + slot.index * 100 + slot.incarnation,
      logFile: join(this.#options.logDir, `${slot.name}.jsonl`),
    };
    const child = spawn(process.execPath, ['--import', 'tsx', this.#options.workerScript ?? WORKER_SCRIPT, JSON.stringify(config)], {
      stdio: ['ignore', 'ignore', 'pipe'],
    });
    const name = slot.name;
    let stderr = '';
    child.stderr?.on('data', (chunk: Buffer) => {
      stderr = (stderr + chunk.toString('utf8')).slice(-STDERR_TAIL_CHARS);
    });
    this.#alive.add(child);
    // Each exit is judged by the process that exited, never by what its slot holds by then.
    child.once('exit', (code, signal) => {
      this.#alive.delete(child);
      if (this.#killed.has(child) || this.#stopping) return;
      this.crashes.push({ worker: name, code, signal, stderrTail: stderr });
      this.#log('kill', name); // gone all the same: its keys must be taken over
      slot.child = undefined;
      this.#restartLater(slot);
    });
    slot.child = child;
    this.#log('start', slot.name);
  }

  #running(): Slot[] {
    return this.#slots.filter(
      (slot) => slot.child !== undefined && slot.child.exitCode === null && slot.child.signalCode === null && !slot.paused,
    );
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
    const kill = this.#random() < 0.5;
    if (kill && slot.index !== this.#options.pauseOnlySlot) {
      this.#killed.add(child);
      child.kill('SIGKILL');
      this.#log('kill', slot.name);
      slot.child = undefined;
      this.#restartLater(slot);
    } else {
      child.kill('SIGSTOP');
      slot.paused = true;
      this.#log('stop', slot.name);
      // Longer than the lease: the paused worker's lock is taken over while it cannot know.
      this.#later(leaseMs + between(this.#random, 200, 1_500), () => {
        child.kill('SIGCONT');
        slot.paused = false;
        this.#log('cont', slot.name);
      });
    }
  }
}
