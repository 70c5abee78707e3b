/**
 * The command of `run`, started in a process group of its own, so that a
 * signal reaches the command and everything it started (a shell script's
 * children too), and a Ctrl-C in the terminal reaches it once, through us,
 * instead of twice.
 */
import { spawn } from 'node:child_process';
import { ExitCode, signalExitCode } from './exit-codes.js';

export interface ChildExit {
  readonly code: number | null;
  readonly signal: NodeJS.Signals | null;
  /** Why it could not be started: `ENOENT` (not found), `EACCES` (not executable), … */
  readonly spawnError?: NodeJS.ErrnoException;
}

export class SupervisedChild {
  /** Settles once the command's process has exited, or failed to start. */
  readonly exited: Promise<ChildExit>;
  readonly #pid: number | undefined;
  #killTimer: NodeJS.Timeout | undefined;

  constructor(command: string, args: readonly string[], env: NodeJS.ProcessEnv) {
    // detached: the child leads a new session and process group, so the terminal's signals go to us only.
    const child = spawn(command, args, { stdio: 'inherit', detached: true, env });
    this.#pid = child.pid;
    this.exited = new Promise<ChildExit>((resolve) => {
      child.once('error', (error: NodeJS.ErrnoException) => {
        if (child.pid === undefined) resolve({ code: null, signal: null, spawnError: error });
      });
      child.once('exit', (code, signal) => resolve({ code, signal }));
    }).finally(() => clearTimeout(this.#killTimer));
  }

  /** Sends `signal` to the command's process group. */
  signal(signal: NodeJS.Signals): void {
    if (this.#pid === undefined) return;
    try {
      process.kill(-this.#pid, signal);
    } catch {
      // The group is gone already.
    }
  }

  /** SIGTERM now, SIGKILL after `graceMs` unless the command has exited by then. */
  terminate(graceMs: number): void {
    this.signal('SIGTERM');
    this.#killTimer ??= setTimeout(() => this.signal('SIGKILL'), graceMs);
  }
}

/**
 * `run`'s exit code: the command's own, 128 + N when a signal killed it (as
 * shells report it), 126/127 when it could not be started, and
 * {@link ExitCode.lockLost} whenever the lock was lost before it exited.
 */
export function runExitCode(exit: ChildExit, lockLost: boolean): number {
  if (lockLost) return ExitCode.lockLost;
  if (exit.spawnError !== undefined) return exit.spawnError.code === 'ENOENT' ? ExitCode.commandNotFound : ExitCode.cannotExecute;
  if (exit.signal !== null) return signalExitCode(exit.signal);
  return exit.code ?? ExitCode.error;
}
