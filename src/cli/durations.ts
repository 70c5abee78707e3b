/**
 * Durations on the command line: a number with a unit (`500ms`, `20s`, `5m`,
 * `1h`), or a bare number of seconds, as `timeout(1)` and `flock -w` read it.
 */
import { UsageError } from './usage-error.js';

const UNIT_MS: Readonly<Record<string, number>> = Object.freeze({ ms: 1, s: 1_000, m: 60_000, h: 3_600_000 });
const DURATION = /^(\d+(?:\.\d+)?)(ms|s|m|h)?$/;

/** One line for help texts. */
export const DURATION_SYNTAX = 'Durations are seconds (20, 1.5) or a number with a unit: 500ms, 20s, 5m, 1h.';

/** Whole milliseconds; `flag` names the flag in the error. */
export function parseDuration(flag: string, text: string): number {
  const match = DURATION.exec(text.trim());
  const ms = match === null ? NaN : Number(match[1]) * (UNIT_MS[match[2] ?? 's'] ?? NaN);
  if (!Number.isSafeInteger(ms) || ms < 1) {
    throw new UsageError(
      `--${flag} must be a duration of at least 1 ms in whole milliseconds, like 20 (seconds), 1.5, 500ms, 20s, 5m or 1h; got ${JSON.stringify(text)}`,
    );
  }
  return ms;
}

/** A duration for people: `500 ms`, `20 s`, `1.5 s`, `2 min`, `600 h`. */
export function formatDuration(ms: number): string {
  if (ms < 1_000) return `${ms} ms`;
  if (ms < 120_000) return `${Number((ms / 1_000).toFixed(2))} s`;
  if (ms < 7_200_000) return `${Number((ms / 60_000).toFixed(1))} min`;
  return `${Number((ms / 3_600_000).toFixed(1))} h`;
}
