/**
 * The CLI's exit codes, documented in `--help` and the README. 75 is
 * sysexits' EX_TEMPFAIL ("try again later"), which cron wrappers and
 * schedulers already treat as a retryable failure.
 */
import { constants } from 'node:os';

export const ExitCode = Object.freeze({
  ok: 0,
  error: 1,
  usage: 2,
  noSuchLock: 3,
  /** The command could not be executed (shells use the same code). */
  cannotExecute: 126,
  /** The command was not found (shells use the same code). */
  commandNotFound: 127,
  /** `run`: another owner holds the lock, or `--timeout` passed. */
  notAcquired: 75,
  /** `run`: the lock was lost while the command ran; the command was terminated. */
  lockLost: 76,
  /** `release --force`: the lock changed (new RVN or holder) while it was watched, or differs from `--rvn`. */
  lockChanged: 77,
});

/** 128 + the signal's number, as shells report a process killed by a signal. */
export function signalExitCode(signal: NodeJS.Signals): number {
  return 128 + (constants.signals[signal] ?? 0);
}
