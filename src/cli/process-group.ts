/** Signals to a whole process group (POSIX), the way `run` reaches its command and everything it started. */

/** Sends `signal` to process group `pgid`; nothing happens when no process is left in it. */
export function signalProcessGroup(pgid: number, signal: NodeJS.Signals): void {
  try {
    process.kill(-pgid, signal);
  } catch {
    // The group is gone already.
  }
}
