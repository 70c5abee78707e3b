/**
 * The CLI's exit codes, documented in `--help` and docs/cli.md. 75 is
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
  /** `run`: another owner holds the lock, or `--timeout` passed; `gc`: the pass ended before it had read every item. */
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

/**
 * Every exit code and what it means, as `dynamodb-lock --help` and the table
 * of docs/cli.md show it (a test keeps that table equal to this one). Each
 * command's own wording in its `--help` names it here.
 */
export const EXIT_CODES: readonly (readonly [code: string, meaning: string])[] = Object.freeze([
  ['0', 'success; watch: also when stopped by SIGINT (Ctrl-C), SIGTERM or SIGHUP, its normal end'],
  [
    '1',
    "error: DynamoDB unreachable or throttled, credentials missing or refused, table missing, … (the reason on stderr); release: also the confirmation was declined, or the delete's outcome is unknown (its first attempt got no answer, and another client holds the lock now); gc: also a delete failed or got no answer (the item is listed with the error)",
  ],
  ['2', 'usage error: unknown flag, missing argument, bad value'],
  ['3', 'get, release: nobody holds the lock'],
  [
    '75',
    'run: someone else holds the lock (at once, or still when --timeout passed); never for an outage; gc: --max-duration passed before the pass had read every item',
  ],
  ['76', 'run: lock lost while the command ran; the command was terminated'],
  ['77', 'release: refused, the lock changed while it was watched (its holder is alive), or differs from --rvn'],
  ['126, 127', 'run: the command could not be executed, or was not found'],
  ['128+N', 'run: the command was killed by signal N; run while it waits, and any other command but watch: interrupted by signal N'],
  ['other', "run: the command's own exit code"],
]);
