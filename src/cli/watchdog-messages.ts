/**
 * What `run` and its watchdog process (watchdog.ts) tell each other over
 * their IPC channel. Instants are milliseconds on the machine's monotonic
 * clock ({@link machineClockMs}), which both processes read alike.
 */

/**
 * The signals `run` passes on to the command's process group while it runs.
 * The watchdog outlives them: when a service manager signals every process
 * of the service at once (systemd's `KillMode=control-group`), the command
 * gets its graceful stop from them and the watchdog still holds the lock's
 * deadlines.
 */
export const RELAYED_SIGNALS: readonly NodeJS.Signals[] = Object.freeze(['SIGINT', 'SIGTERM', 'SIGHUP', 'SIGQUIT']);

/** The times the watchdog enforces: the command's whole process group gets SIGTERM at `termAt` and SIGKILL at `killAt`. */
export interface Deadlines {
  readonly termAt: number;
  readonly killAt: number;
}

export type ToWatchdog =
  /** Start the command with these deadlines; after any termination, SIGKILL comes `graceMs` after SIGTERM at the latest. */
  | {
      readonly type: 'start';
      readonly program: string;
      readonly args: readonly string[];
      readonly env: NodeJS.ProcessEnv;
      readonly deadlines: Deadlines;
      readonly graceMs: number;
    }
  /** A heartbeat was confirmed: later deadlines. */
  | { readonly type: 'renew'; readonly deadlines: Deadlines }
  /** The lock is lost: SIGTERM now, SIGKILL after the grace period. */
  | { readonly type: 'stop' }
  /** Pass a signal on to the command's process group. */
  | { readonly type: 'signal'; readonly signal: NodeJS.Signals };

export type FromWatchdog =
  | { readonly type: 'started'; readonly pid: number }
  | { readonly type: 'spawn-error'; readonly code: string | undefined; readonly message: string }
  /** `termAt` passed without a renewal: the watchdog is stopping the command on its own. */
  | { readonly type: 'expired' }
  /** The command exited, and whatever it left in its process group was killed. */
  | { readonly type: 'exited'; readonly code: number | null; readonly signal: NodeJS.Signals | null };

/**
 * The machine's monotonic clock (CLOCK_MONOTONIC on Linux), shared by all its
 * processes, unlike `performance.now()`, which counts from each process's start.
 */
export function machineClockMs(): number {
  return Number(process.hrtime.bigint()) / 1e6;
}
