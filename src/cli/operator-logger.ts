/**
 * The lock client's warnings and errors, told to the operator: one plain line
 * each on stderr (stdout carries what scripts parse), with the cause in a few
 * words. Debug lines are dropped.
 *
 * During an outage the client fails and retries at every poll. A line that
 * comes back (same level, message, lock and kind of cause) is printed the
 * first time, then no more than once per {@link REPEAT_INTERVAL_MS}, saying
 * how often it came since it was last printed: a terminal or a cron mail
 * gets a few lines an hour, not one a second. When the command ends,
 * {@link OperatorLogger.flush} prints the tally of every line held back
 * since its last printing.
 *
 * The client's warning that a lock was lost is left out: the command that
 * held the lock tells of the loss itself, with what it does about it.
 */
import { systemClock, type MonotonicClock } from '../base/clock.js';
import { describeLockKey } from '../base/lock-key.js';
import type { Logger } from '../base/logger.js';
import { formatDuration } from './durations.js';
import { errorSummary } from './explain-error.js';
import type { CliIO } from './io.js';

/** The shortest time between two printings of the same line. */
export const REPEAT_INTERVAL_MS = 30_000;

interface Repeats {
  /** Monotonic time of the last printing. */
  printedAt: number;
  /** How often the line came since then without being printed. */
  held: number;
  /** The newest of those, as it would be printed. */
  newest: string;
}

export interface OperatorLogger extends Logger {
  /** Prints, for each line held back since its last printing, the newest with how often it came. */
  flush(): void;
}

export function operatorLogger(io: Pick<CliIO, 'err'>, clock: MonotonicClock = systemClock): OperatorLogger {
  const seen = new Map<string, Repeats>();
  const tally = (repeats: Repeats, times: number, now: number): string =>
    times === 0 ? '' : ` (${times} times in the last ${formatDuration(Math.round((now - repeats.printedAt) / 1_000) * 1_000)})`;
  const print =
    (level: 'warning' | 'error') =>
    (details: object, message: string): void => {
      const { event, err, partitionKey, sortKey } = details as { event?: unknown; err?: unknown; partitionKey?: unknown; sortKey?: unknown };
      if (event === 'lost') return;
      const lock = typeof partitionKey === 'string' ? ` (lock ${describeLockKey({ partitionKey, sortKey: stringOr(sortKey) })})` : '';
      const line = `${level}: ${message}${lock}`;
      const cause = err === undefined ? '' : `: ${errorSummary(err)}`;
      // Causes of one kind differ in their wording (addresses, request ids), not in what the operator should know.
      const id = `${line}\n${kindOf(err)}`;
      const text = `dynamodb-lock: ${line}${cause}`;
      const now = clock.now();
      const repeats = seen.get(id);
      if (repeats === undefined) {
        seen.set(id, { printedAt: now, held: 0, newest: text });
        io.err(`${text}\n`);
        return;
      }
      if (now - repeats.printedAt < REPEAT_INTERVAL_MS) {
        repeats.held += 1;
        repeats.newest = text;
        return;
      }
      io.err(`${text}${tally(repeats, repeats.held === 0 ? 0 : repeats.held + 1, now)}\n`);
      seen.set(id, { printedAt: now, held: 0, newest: text });
    };
  const flush = (): void => {
    const now = clock.now();
    for (const repeats of seen.values()) {
      if (repeats.held === 0) continue;
      io.err(`${repeats.newest}${tally(repeats, repeats.held, now)}\n`);
      Object.assign(repeats, { printedAt: now, held: 0 });
    }
  };
  return { debug: () => {}, warn: print('warning'), error: print('error'), flush };
}

const stringOr = (value: unknown): string | undefined => (typeof value === 'string' ? value : undefined);

/** `ThrottlingException`, `Error/ECONNREFUSED`: what kind of failure, without its particulars. */
function kindOf(error: unknown): string {
  if (!(error instanceof Error)) return typeof error;
  const code = (error as { code?: unknown }).code;
  return typeof code === 'string' ? `${error.name}/${code}` : error.name;
}
