/**
 * The CLI's logger: one line per warning on stderr, and a failure that comes
 * back at every poll printed once, then once per interval with its count.
 */
import { describe, expect, it } from '@jest/globals';
import { operatorLogger, REPEAT_INTERVAL_MS } from '../../src/cli/operator-logger.js';

function loggerAt(): { lines: string[]; clock: { t: number; now(): number }; logger: ReturnType<typeof operatorLogger> } {
  const lines: string[] = [];
  const clock = {
    t: 0,
    now() {
      return this.t;
    },
  };
  const logger = operatorLogger({ err: (text) => lines.push(text) }, clock);
  return { lines, clock, logger };
}

const throttled = (): Error => Object.assign(new Error('Rate of requests exceeds the allowed throughput.'), { name: 'ThrottlingException' });
const refused = (port: number): Error => Object.assign(new Error(`connect ECONNREFUSED 127.0.0.1:${port}`), { code: 'ECONNREFUSED' });

describe('operatorLogger', () => {
  it('writes warnings and errors as one line with the lock and the cause in short, and drops debug', () => {
    const { lines, logger } = loggerAt();
    logger.debug({ err: throttled() }, 'background heartbeat failed');
    logger.warn({ err: throttled(), partitionKey: 'job', sortKey: undefined, lockTable: 'locks' }, 'lock acquisition attempt failed; retrying');
    logger.error({ err: refused(9), partitionKey: 'job', sortKey: 'a b' }, 'heartbeat failed');
    logger.warn({}, 'leaseDuration is less than twice heartbeatPeriod');
    expect(lines).toEqual([
      'dynamodb-lock: warning: lock acquisition attempt failed; retrying (lock "job"): ThrottlingException: Rate of requests exceeds the allowed throughput.\n',
      'dynamodb-lock: error: heartbeat failed (lock "job"/"a b"): Error: connect ECONNREFUSED 127.0.0.1:9\n',
      'dynamodb-lock: warning: leaseDuration is less than twice heartbeatPeriod\n',
    ]);
  });

  it("leaves a lock's loss to the command that held it, which tells it with what it does about it", () => {
    const { lines, logger } = loggerAt();
    logger.warn({ event: 'lost', err: throttled(), partitionKey: 'job', kind: 'expired' }, 'lock lost: its lease ran out');
    logger.warn({ err: throttled(), partitionKey: 'job' }, 'heartbeat failed');
    expect(lines).toEqual([
      'dynamodb-lock: warning: heartbeat failed (lock "job"): ThrottlingException: Rate of requests exceeds the allowed throughput.\n',
    ]);
  });

  it('tallies, when flushed, the lines held back since their last printing', () => {
    const { lines, clock, logger } = loggerAt();
    const retry = (port: number): void => logger.warn({ err: refused(port), partitionKey: 'job' }, 'lock acquisition attempt failed; retrying');
    retry(1);
    logger.warn({}, 'printed once, never again');
    for (let second = 1; second <= 4; second += 1) {
      clock.t = second * 1_000;
      retry(second + 1);
    }
    clock.t = 6_000;
    logger.flush();
    expect(lines.slice(2)).toEqual([
      'dynamodb-lock: warning: lock acquisition attempt failed; retrying (lock "job"): Error: connect ECONNREFUSED 127.0.0.1:5 (4 times in the last 6 s)\n',
    ]);

    // Told: a second flush has nothing to add.
    logger.flush();
    expect(lines).toHaveLength(3);
  });

  it('tells a cause without a message by its code', () => {
    const { lines, logger } = loggerAt();
    logger.warn({ err: Object.assign(new AggregateError([], ''), { code: 'ECONNREFUSED' }) }, 'heartbeat failed');
    expect(lines).toEqual(['dynamodb-lock: warning: heartbeat failed: AggregateError: ECONNREFUSED\n']);
  });

  it('prints a line that comes back once, then at most once per interval with how often it came', () => {
    const { lines, clock, logger } = loggerAt();
    const retry = (): void => logger.warn({ err: throttled(), partitionKey: 'job' }, 'lock acquisition attempt failed; retrying');
    retry();
    for (let second = 1; second < REPEAT_INTERVAL_MS / 1_000; second += 1) {
      clock.t = second * 1_000;
      retry();
    }
    expect(lines).toHaveLength(1);

    clock.t = REPEAT_INTERVAL_MS + 400;
    retry();
    expect(lines).toHaveLength(2);
    expect(lines[1]).toBe(
      'dynamodb-lock: warning: lock acquisition attempt failed; retrying (lock "job"): ' +
        'ThrottlingException: Rate of requests exceeds the allowed throughput. (30 times in the last 30 s)\n',
    );

    // Once alone in its interval, it is printed as it is.
    clock.t += REPEAT_INTERVAL_MS;
    retry();
    expect(lines[2]).not.toContain('times in the last');
  });

  it('prints at once a different message, lock or kind of cause, but not the same cause in other words', () => {
    const { lines, logger } = loggerAt();
    logger.warn({ err: refused(1), partitionKey: 'job' }, 'heartbeat failed');
    logger.warn({ err: refused(2), partitionKey: 'job' }, 'heartbeat failed');
    logger.warn({ err: throttled(), partitionKey: 'job' }, 'heartbeat failed');
    logger.warn({ err: throttled(), partitionKey: 'other' }, 'heartbeat failed');
    logger.error({ err: throttled(), partitionKey: 'other' }, 'heartbeat failed');
    logger.warn({ err: throttled(), partitionKey: 'other' }, 'lock acquisition attempt failed; retrying');
    expect(lines).toHaveLength(5);
    expect(lines.join('')).not.toContain('127.0.0.1:2');
  });
});
