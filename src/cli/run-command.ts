/**
 * `dynamodb-lock run KEY -- COMMAND [ARGS...]`: flock across machines. Takes
 * the lock (or gives up at once, or after --timeout), runs the command while
 * heartbeats keep the lock, and releases it when the command exits. Should
 * the lock be lost meanwhile, the command is stopped: SIGTERM, then SIGKILL.
 */
import { hostname } from 'node:os';
import { basename } from 'node:path';
import { deadline } from '../deadline.js';
import { DynamoDBUnavailableError, LockCurrentlyUnavailableError, LockNotGrantedError, type LockHolder } from '../errors.js';
import type { LockClient } from '../lock-client.js';
import type { Lock } from '../lock.js';
import type { Command } from './command.js';
import { formatDuration } from './durations.js';
import { ExitCode } from './exit-codes.js';
import type { CliIO } from './io.js';
import { describeKey } from './lock-format.js';
import { SignalRelay } from './signal-relay.js';
import { SupervisedChild, runExitCode } from './supervised-child.js';
import { InterruptedError, UsageError } from './usage-error.js';

/** Signals passed on to the command while it runs. */
const FORWARDED_SIGNALS: readonly NodeJS.Signals[] = ['SIGINT', 'SIGTERM', 'SIGHUP', 'SIGQUIT'];
const DEFAULT_GRACE_MS = 10_000;
/** The release after the command may take this long; if it fails, the lock lapses after its lease. */
const RELEASE_TIMEOUT_MS = 5_000;

export const runCommand: Command = {
  name: 'run',
  synopsis: 'KEY [--wait | --timeout DURATION] [--grace DURATION] [--owner NAME] [--data TEXT] [--sort-key VALUE] -- COMMAND [ARGS...]',
  summary: 'run a command while holding a lock (flock across machines)',
  description:
    'Takes the lock KEY, runs COMMAND while heartbeats keep the lock, releases the lock when COMMAND\n' +
    "exits, and exits with COMMAND's exit code. Without --wait or --timeout it does not wait: when\n" +
    'someone else holds the lock it exits with 75 at once (what a cron job on many machines wants).\n' +
    '--wait waits as long as it takes; --timeout waits at most that long. A lock whose holder died is\n' +
    'taken over once its record version number stood still for its lease, so only a wait longer than\n' +
    'the lease gets past a dead holder. When DynamoDB does not answer (unreachable, throttled, refused\n' +
    'credentials), it exits with 1 and the reason, never with 75: nobody is known to hold the lock.\n' +
    '\n' +
    'COMMAND runs in its own process group with the same stdin, stdout and stderr. SIGINT, SIGTERM,\n' +
    'SIGHUP and SIGQUIT sent to dynamodb-lock are passed on to it. If the lock is lost while it runs\n' +
    '(taken over after missed heartbeats, or released by an operator), COMMAND gets SIGTERM, then\n' +
    'SIGKILL after --grace (default 10s); dynamodb-lock then exits with 76. The lock stores --data,\n' +
    'by default JSON with the host name, pid and command name, which list and get show.',
  flags: ['sort-key', 'wait', 'timeout', 'grace', 'lease', 'heartbeat', 'owner', 'data'],
  arguments: { min: 1, max: 1, names: 'KEY' },
  exitCodes: [
    ['N', "COMMAND's exit code"],
    ['75', 'someone else holds the lock (at once, or still when --timeout passed)'],
    ['76', 'lock lost while COMMAND ran; COMMAND was terminated'],
    ['126, 127', 'COMMAND could not be executed, or was not found'],
    ['128+N', 'COMMAND was killed by signal N (or dynamodb-lock was, while waiting)'],
  ],
  examples: [
    '# crontab on every machine: the report runs once per night, wherever the lock is free',
    '0 2 * * * dynamodb-lock run --table locks --region eu-west-1 nightly-report -- /opt/report/run.sh',
    'dynamodb-lock run --table locks --timeout 5m --lease 30s db-migration -- npm run migrate',
  ],
  handlesSignals: true,
  async run({ flags, io, positionals, commandArgv, connect }) {
    const [program, ...args] = commandArgv;
    if (program === undefined) throw new UsageError('run needs a command after --: dynamodb-lock run KEY -- COMMAND [ARGS...]', 'run');
    const partitionKey = positionals[0] as string;
    const sortKey = flags.string('sort-key');
    const wait = flags.boolean('wait');
    const timeout = flags.duration('timeout');
    if (wait && timeout !== undefined) throw new UsageError('pass --wait or --timeout, not both', 'run');
    const graceMs = flags.duration('grace') ?? DEFAULT_GRACE_MS;
    const data = flags.string('data') ?? JSON.stringify({ host: hostname(), pid: process.pid, command: basename(program) });
    const key = describeKey(partitionKey, sortKey);

    const interrupt = new AbortController();
    const signals = new SignalRelay(FORWARDED_SIGNALS, (signal) => interrupt.abort(new InterruptedError(signal)));
    try {
      const connection = await connect();
      try {
        connection.lockKey(partitionKey, sortKey);
        interrupt.signal.throwIfAborted();
        const lock = await acquire(connection.client, io, key, partitionKey, {
          sortKey,
          data,
          wait: wait ? 'forever' : timeout === undefined ? 'no' : timeout,
          interrupted: interrupt.signal,
        });
        if (lock === undefined) return ExitCode.notAcquired;

        const child = new SupervisedChild(program, args, io.env);
        signals.handler = (signal) => child.signal(signal);
        const onLost = (): void => {
          io.err(`dynamodb-lock: ${(lock.signal.reason as Error).message}; sending SIGTERM to the command (SIGKILL in ${formatDuration(graceMs)})\n`);
          child.terminate(graceMs);
        };
        lock.signal.addEventListener('abort', onLost, { once: true });
        const exit = await child.exited;
        lock.signal.removeEventListener('abort', onLost);
        const noticedWhileRunning = lock.signal.aborted;
        const lost = noticedWhileRunning || !isStillHeld(lock);
        if (lost) {
          // The lock is gone: nothing the command left running may go on.
          child.signal('SIGKILL');
          if (!noticedWhileRunning) io.err(`dynamodb-lock: ${(lock.signal.reason as Error).message}, before the command exited\n`);
        } else {
          await release(lock, io);
        }
        if (exit.spawnError !== undefined) io.err(`dynamodb-lock: cannot run ${JSON.stringify(program)}: ${exit.spawnError.message}\n`);
        return runExitCode(exit, lost);
      } finally {
        await connection.close();
      }
    } finally {
      signals.dispose();
    }
  },
};

/** Checks the lock's safe time on the clock, which a late timer may not have done yet. */
function isStillHeld(lock: Lock): boolean {
  try {
    lock.throwIfLost();
    return true;
  } catch {
    return false;
  }
}

async function release(lock: Lock, io: CliIO): Promise<void> {
  const bound = deadline(RELEASE_TIMEOUT_MS);
  try {
    await lock.release({ signal: bound.signal });
  } catch (error) {
    io.err(`dynamodb-lock: could not release the lock (${(error as Error).message}); it lapses after its lease\n`);
  } finally {
    bound.clear();
  }
}

interface AcquireChoice {
  readonly sortKey: string | undefined;
  readonly data: string;
  /** `no`: fail at once if held; `forever`; or at most this many milliseconds. */
  readonly wait: 'no' | 'forever' | number;
  readonly interrupted: AbortSignal;
}

/**
 * The lock, or `undefined` (after saying why on stderr) when someone else
 * holds it. The outcome is always that of an attempt that does not wait,
 * made at once or when `--timeout` has passed: it tells a lock held by
 * someone else from a DynamoDB that does not answer, which rejects (with
 * `DynamoDBUnavailableError`) and ends the command with 1, not 75.
 */
async function acquire(client: LockClient, io: CliIO, key: string, partitionKey: string, choice: AcquireChoice): Promise<Lock | undefined> {
  const options = { sortKey: choice.sortKey, data: choice.data };
  if (choice.wait !== 'no') {
    const timeout = typeof choice.wait === 'number' ? deadline(choice.wait) : undefined;
    try {
      return await client.acquireLock(partitionKey, {
        ...options,
        additionalTimeToWaitForLock: Infinity,
        signal: timeout === undefined ? choice.interrupted : AbortSignal.any([choice.interrupted, timeout.signal]),
      });
    } catch (error) {
      if (choice.interrupted.aborted) throw choice.interrupted.reason;
      if (timeout?.signal.aborted !== true) throw error;
    } finally {
      timeout?.clear();
    }
  }
  try {
    return await client.acquireLock(partitionKey, { ...options, shouldSkipBlockingWait: true, signal: choice.interrupted });
  } catch (error) {
    if (choice.interrupted.aborted) throw choice.interrupted.reason;
    if (error instanceof LockCurrentlyUnavailableError || (error instanceof LockNotGrantedError && !(error instanceof DynamoDBUnavailableError))) {
      io.err(`dynamodb-lock: ${heldMessage(key, error.holder, choice.wait)}; not running the command\n`);
      return undefined;
    }
    throw error;
  }
}

function heldMessage(key: string, holder: LockHolder | undefined, wait: AcquireChoice['wait']): string {
  const by = `held by ${holder?.ownerName ?? 'someone else'}`;
  if (typeof wait === 'number') return `did not get the lock ${key} within ${formatDuration(wait)} (${by})`;
  const takeover = holder === undefined ? '' : `; if that holder is gone, --wait or a --timeout longer than its lease (${formatDuration(holder.leaseDurationMs)}) takes the lock over`;
  return `the lock ${key} is ${by}${takeover}`;
}
