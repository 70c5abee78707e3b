/**
 * The command of `run`, started by a watchdog process (watchdog.ts) that
 * holds the lock's deadlines and stops the command's whole process group by
 * them, even when `dynamodb-lock` itself is killed or stalls.
 *
 * Why a process of our own: the command must die within the lock's safety
 * margin whatever happens to `dynamodb-lock`, SIGKILL included, and so must
 * everything it started. The kernel's parent-death signal (PR_SET_PDEATHSIG,
 * `setpriv --pdeathsig`) reaches only the direct child, on Linux only, and
 * not a supervisor that is stopped rather than dead. A watchdog tied to
 * `run` by a pipe sees it die (the pipe closes), keeps its own timers, and
 * signals the command's process group. It costs one more Node process while
 * the command runs.
 *
 * The watchdog runs in a session of its own, and the command in another:
 * signals meant for `dynamodb-lock`'s process group (a Ctrl-C at the
 * terminal, a `kill -- -PGID`) reach neither directly; `run` passes them on.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { dirname, extname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { ExitCode, signalExitCode } from './exit-codes.js';
import { signalProcessGroup } from './process-group.js';
import type { Deadlines, FromWatchdog, ToWatchdog } from './watchdog-messages.js';

const HERE = fileURLToPath(import.meta.url);
/** watchdog.js beside this file once built, watchdog.ts when run from source (through tsx). */
const WATCHDOG = join(dirname(HERE), `watchdog${extname(HERE)}`);

export type CommandExit =
  /** The command ran and exited; `expired` when the watchdog stopped it because no renewal came before the lock's safe time ended. */
  | { readonly kind: 'exited'; readonly code: number | null; readonly signal: NodeJS.Signals | null; readonly expired: boolean }
  /** The command could not be started: `ENOENT` (not found), `EACCES` (not executable), … */
  | { readonly kind: 'not-started'; readonly code: string | undefined; readonly message: string }
  /** The watchdog could not be started, or ended on its own; the command's process group was killed. */
  | { readonly kind: 'unwatched'; readonly message: string };

export interface WatchedCommandOptions {
  readonly program: string;
  readonly args: readonly string[];
  readonly env: NodeJS.ProcessEnv;
  readonly deadlines: Deadlines;
  /** Longest time between SIGTERM and SIGKILL. */
  readonly graceMs: number;
}

export class WatchedCommand {
  /** Settles once the command has exited (and its process group is dead), or could not be started. */
  readonly exited: Promise<CommandExit>;
  readonly #watchdog: ChildProcess;

  constructor(options: WatchedCommandOptions) {
    // The Node flags of this process (a loader such as tsx), not a debugger's port, which is taken.
    const nodeFlags = process.execArgv.filter((flag) => !flag.startsWith('--inspect'));
    const watchdog = spawn(process.execPath, [...nodeFlags, WATCHDOG], { stdio: ['inherit', 'inherit', 'inherit', 'ipc'], detached: true });
    this.#watchdog = watchdog;
    this.exited = new Promise<CommandExit>((resolve) => {
      let commandPid: number | undefined;
      let expired = false;
      let settled = false;
      const settle = (exit: CommandExit): void => {
        settled = true;
        resolve(exit);
      };
      watchdog.on('message', (message: FromWatchdog) => {
        if (message.type === 'started') commandPid = message.pid;
        else if (message.type === 'expired') expired = true;
        else if (message.type === 'spawn-error') settle({ kind: 'not-started', code: message.code, message: message.message });
        else settle({ kind: 'exited', code: message.code, signal: message.signal, expired });
      });
      // Any error of the channel (a send to a watchdog that just died) ends in 'close' below.
      watchdog.on('error', (error) => {
        if (watchdog.pid === undefined) settle({ kind: 'unwatched', message: `cannot start the watchdog process: ${error.message}` });
      });
      // 'close', not 'exit': it comes after every message the watchdog sent has been read.
      watchdog.once('close', (code, signal) => {
        if (settled) return;
        // It ended without reporting the command's exit: the command must not go on unwatched.
        if (commandPid !== undefined) signalProcessGroup(commandPid, 'SIGKILL');
        settle({ kind: 'unwatched', message: `the watchdog process ended (${signal ?? `exit code ${code}`}); the command was killed` });
      });
    });
    this.#send({
      type: 'start',
      program: options.program,
      args: options.args,
      env: options.env,
      deadlines: options.deadlines,
      graceMs: options.graceMs,
    });
  }

  /** New deadlines, after a confirmed heartbeat. */
  renew(deadlines: Deadlines): void {
    this.#send({ type: 'renew', deadlines });
  }

  /** The lock is lost: SIGTERM to the command's group now, SIGKILL after the grace period. */
  stop(): void {
    this.#send({ type: 'stop' });
  }

  /** Passes `signal` on to the command's process group. */
  signal(signal: NodeJS.Signals): void {
    this.#send({ type: 'signal', signal });
  }

  #send(message: ToWatchdog): void {
    if (this.#watchdog.connected) this.#watchdog.send(message);
  }
}

/**
 * `run`'s exit code: the command's own, 128 + N when a signal killed it (as
 * shells report it), 126/127 when it could not be started, 1 when it could
 * not be watched, and {@link ExitCode.lockLost} whenever the lock was lost
 * before it exited.
 */
export function runExitCode(exit: CommandExit, lockLost: boolean): number {
  if (lockLost) return ExitCode.lockLost;
  switch (exit.kind) {
    case 'not-started':
      return exit.code === 'ENOENT' ? ExitCode.commandNotFound : ExitCode.cannotExecute;
    case 'unwatched':
      return ExitCode.error;
    case 'exited':
      if (exit.signal !== null) return signalExitCode(exit.signal);
      return exit.code ?? ExitCode.error;
  }
}
