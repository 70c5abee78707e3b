/**
 * `dynamodb-lock run KEY -- COMMAND [ARGS...]`: flock across machines. Takes
 * the lock (or gives up at once, or after --timeout), runs the command while
 * heartbeats keep the lock, and releases it when the command exits.
 *
 * The command never outlives the lock: another client can take a lock over
 * no earlier than one safety margin after the holder's safe time ended (its
 * lease minus that margin after the last confirmed write). So the command's
 * process group gets SIGTERM when the lock is lost, or when its safe time
 * ends without a renewal, and SIGKILL at most half a safety margin later.
 * A watchdog process enforces those deadlines (watched-command.ts), also
 * when dynamodb-lock itself is killed or stalls.
 */
import { hostname } from 'node:os';
import { basename } from 'node:path';
import { deadline } from '../primitives/deadline.js';
import { heldByAnother, type LockHolder } from '../base/errors.js';
import type { AcquireLockOptions } from '../acquire/acquire-options.js';
import { permitKey } from '../semaphore/permit-keys.js';
import { describeLockKey } from '../base/lock-key.js';
import type { Lock } from '../lock.js';
import type { LockTable } from '../protocol/index.js';
import type { Command } from './command.js';
import type { LeaseTimes } from './connection.js';
import { formatDuration } from './durations.js';
import { ExitCode } from './exit-codes.js';
import { errorSummary } from './explain-error.js';
import { longDeadline } from './long-timer.js';
import type { CliIO } from './io.js';
import { SignalRelay } from './signal-relay.js';
import { InterruptedError, UsageError } from './usage-error.js';
import { runExitCode, WatchedCommand, type CommandExit } from './watched-command.js';
import { machineClockMs, RELAYED_SIGNALS, type Deadlines } from './watchdog-messages.js';
import { WITH_LOCK_DEFAULTS } from '../settings/defaults.js';

export const runCommand: Command = {
  name: 'run',
  synopsis:
    'KEY [--permits N] [--wait | --timeout DURATION] [--lease DURATION] [--heartbeat DURATION] [--grace DURATION] [--owner NAME] [--data TEXT] [--sort-key VALUE] -- COMMAND [ARGS...]',
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
    'COMMAND runs in a process group of its own with the same stdin, stdout and stderr, and finds the\n' +
    'lock in DYNAMODB_LOCK_TABLE, DYNAMODB_LOCK_KEY, DYNAMODB_LOCK_SORT_KEY (with a sort key),\n' +
    'DYNAMODB_LOCK_OWNER and DYNAMODB_LOCK_RVN (the RVN it was acquired with). SIGINT, SIGTERM, SIGHUP\n' +
    'and SIGQUIT sent to dynamodb-lock are passed on to it.\n' +
    '\n' +
    'COMMAND never outlives the lock. When the lock is lost (taken over, released by an operator, or\n' +
    'not renewed within its lease minus the safety margin, a tenth of the lease), its whole process\n' +
    'group gets SIGTERM, and SIGKILL half a safety margin later (sooner with --grace), before any other\n' +
    'client can take the lock; dynamodb-lock then exits with 76. A watchdog process does this even\n' +
    'when dynamodb-lock is killed (SIGKILL too) or stopped. When COMMAND exits, whatever it left\n' +
    'running in its process group is killed before the lock is released. The lock stores --data, by\n' +
    'default JSON with the host name, pid and command name, which list and get show.\n' +
    '\n' +
    'With --permits N, KEY names a semaphore of N permits (docs/semaphores.md): at most N copies of\n' +
    'COMMAND run at once across the fleet, each while it holds one permit, the lock KEY#permit-k, with\n' +
    'every guarantee above; 75 then means that all N permits are held. Every copy must pass the same N.',
  flags: ['sort-key', 'permits', 'wait', 'timeout', 'grace', 'lease', 'heartbeat', 'owner', 'data'],
  arguments: { min: 1, max: 1, names: 'KEY' },
  exitCodes: [
    ['75', 'someone else holds the lock (at once, or still when --timeout passed)'],
    ['76', 'lock lost while COMMAND ran; COMMAND was terminated'],
    ['126, 127', 'COMMAND could not be executed, or was not found'],
    ['128+N', 'COMMAND was killed by signal N (or dynamodb-lock was, while waiting)'],
    ['other', "COMMAND's own exit code"],
  ],
  examples: [
    '# crontab on every machine: the report runs once per night, wherever the lock is free',
    '0 2 * * * dynamodb-lock run --table locks --region eu-west-1 nightly-report -- /opt/report/run.sh',
    '# at most 3 exports at once, on whichever machines',
    'dynamodb-lock run --table locks --permits 3 --wait exports -- ./export.sh',
    'dynamodb-lock run --table locks --timeout 5m --lease 30s db-migration -- npm run migrate',
  ],
  handlesSignals: true,
  async run({ flags, io, positionals, commandArgv, lease, connect }) {
    const [program, ...args] = commandArgv;
    if (program === undefined) throw new UsageError('run needs a command after --: dynamodb-lock run KEY -- COMMAND [ARGS...]', 'run');
    const partitionKey = positionals[0] as string;
    const sortKey = flags.string('sort-key');
    const permits = flags.count('permits');
    const wait = flags.boolean('wait');
    const timeout = flags.duration('timeout');
    if (wait && timeout !== undefined) throw new UsageError('pass --wait or --timeout, not both', 'run');
    const graceMs = graceOf(flags.duration('grace'), lease);
    const data = flags.string('data') ?? JSON.stringify({ host: hostname(), pid: process.pid, command: basename(program) });
    const key = permits === undefined ? lockTarget(describeLockKey({ partitionKey, sortKey })) : semaphoreTarget(partitionKey, permits);

    const interrupt = new AbortController();
    const signals = new SignalRelay(RELAYED_SIGNALS, (signal) => interrupt.abort(new InterruptedError(signal)));
    try {
      const connection = await connect({ signal: interrupt.signal });
      try {
        // The longest key it may take: its last permit's.
        connection.lockKey(permits === undefined ? partitionKey : permitKey(partitionKey, permits, sortKey).partitionKey, sortKey);
        interrupt.signal.throwIfAborted();
        const { client } = connection;
        const take: Take =
          permits === undefined
            ? (options) => client.acquireLock(partitionKey, options)
            : (options) => client.acquirePermit(partitionKey, { ...options, permits });
        const lock = await acquire(take, io, key, {
          sortKey,
          data,
          wait: wait ? 'forever' : (timeout ?? 'no'),
          interrupted: interrupt.signal,
        });
        if (lock === undefined) return ExitCode.notAcquired;

        const deadlines = (): Deadlines => deadlinesOf(lock, graceMs);
        const command = new WatchedCommand({
          program,
          args,
          env: { ...io.env, ...lockEnvironment(connection.table, lock) },
          deadlines: deadlines(),
          graceMs,
        });
        signals.handler = (signal) => command.signal(signal);
        const renewals = connection.client.on('heartbeat', () => command.renew(deadlines()));
        const onLost = (): void => {
          io.err(`dynamodb-lock: ${lossOf(lock)}; sending SIGTERM to the command (SIGKILL in ${formatDuration(graceMs)})\n`);
          command.stop();
        };
        lock.signal.addEventListener('abort', onLost, { once: true });
        let exit: CommandExit;
        try {
          exit = await command.exited;
        } finally {
          renewals.dispose();
          lock.signal.removeEventListener('abort', onLost);
        }
        return await finish(lock, exit, program, io);
      } finally {
        await connection.close();
      }
    } finally {
      signals.dispose();
    }
  },
};

/** `--grace`, which may only shorten the longest grace the lock allows: half its safety margin. */
function graceOf(given: number | undefined, lease: LeaseTimes): number {
  const longest = Math.floor(lease.safetyMarginMs / 2);
  if (given !== undefined && given > longest) {
    throw new UsageError(
      `--grace must be at most half the safety margin of the lease, ${formatDuration(longest)} with a lease of ${formatDuration(lease.durationMs)}: ` +
        'a longer grace would let the command run on after another client could take the lock (a longer --lease allows more)',
      'run',
    );
  }
  return given ?? longest;
}

/**
 * When the command must be stopped should no renewal come: SIGTERM when the
 * lock's safe time ends, SIGKILL the grace period later, on the machine's clock.
 */
function deadlinesOf(lock: Lock, graceMs: number): Deadlines {
  const termAt = machineClockMs() + lock.safeTimeLeft();
  return { termAt, killAt: termAt + graceMs };
}

/** The lock, for the command's environment. */
function lockEnvironment(table: LockTable, lock: Lock): NodeJS.ProcessEnv {
  return {
    DYNAMODB_LOCK_TABLE: table.tableName,
    DYNAMODB_LOCK_KEY: lock.partitionKey,
    ...(lock.sortKey === undefined ? {} : { DYNAMODB_LOCK_SORT_KEY: lock.sortKey }),
    DYNAMODB_LOCK_OWNER: lock.ownerName,
    DYNAMODB_LOCK_RVN: lock.recordVersionNumber,
  };
}

/** Why the lock was lost, with the failure behind it if there was one (the heartbeat's last error, say). */
function lossOf(lock: Lock): string {
  const reason = lock.signal.reason as Error;
  return reason.cause === undefined ? reason.message : `${reason.message} (${errorSummary(reason.cause)})`;
}

/** After the command (and all it left in its group) is gone: release the lock if it is still held; the exit code. */
async function finish(lock: Lock, exit: CommandExit, program: string, io: CliIO): Promise<number> {
  const noticedWhileRunning = lock.signal.aborted;
  // isHeld() reads the clocks itself, which a late timer may not have done yet.
  const held = lock.isHeld();
  // Still held after the watchdog stopped the command on its own: a renewal reached it too late.
  const expired = exit.kind === 'exited' && exit.expired;
  if (held) await release(lock, io);
  else if (!noticedWhileRunning) io.err(`dynamodb-lock: ${lossOf(lock)}, before the command exited\n`);
  if (expired && held) io.err("dynamodb-lock: the command was stopped: the lock's safe time ended before a renewal reached the watchdog\n");
  if (exit.kind === 'not-started') io.err(`dynamodb-lock: cannot run ${JSON.stringify(program)}: ${exit.message}\n`);
  if (exit.kind === 'unwatched') io.err(`dynamodb-lock: ${exit.message}\n`);
  return runExitCode(exit, noticedWhileRunning || !held || expired);
}

/** Bounded; if it fails, the lock lapses after its lease, and the command's exit code stands. */
async function release(lock: Lock, io: CliIO): Promise<void> {
  const bound = deadline(WITH_LOCK_DEFAULTS.releaseTimeout);
  try {
    await lock.release({ signal: bound.signal });
  } catch (error) {
    io.err(`dynamodb-lock: could not release the lock (${(error as Error).message}); it lapses after its lease\n`);
  } finally {
    bound.clear();
  }
}

/** `acquireLock` of the lock KEY, or `acquirePermit` of the semaphore KEY, with the options `run` gives either. */
type Take = (
  options: Pick<AcquireLockOptions, 'sortKey' | 'data' | 'additionalTimeToWaitForLock' | 'shouldSkipBlockingWait' | 'signal'>,
) => Promise<Lock>;

/** What `run` takes, as its messages name it. */
interface Target {
  /** What it did not get: `the lock "KEY"`. */
  readonly name: string;
  /** That it is held, by `by` (among others, for a semaphore). */
  held(by: string): string;
  /** What a holder that is gone leaves to be taken over. */
  readonly takenOver: string;
}

const lockTarget = (key: string): Target => ({
  name: `the lock ${key}`,
  held: (by) => `the lock ${key} is held by ${by}`,
  takenOver: 'the lock',
});

const semaphoreTarget = (name: string, permits: number): Target => ({
  name: `a permit of the semaphore ${JSON.stringify(name)}`,
  held: (by) => `all ${permits} permits of the semaphore ${JSON.stringify(name)} are held (one by ${by})`,
  takenOver: 'its permit',
});

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
async function acquire(take: Take, io: CliIO, key: Target, choice: AcquireChoice): Promise<Lock | undefined> {
  const options = { sortKey: choice.sortKey, data: choice.data };
  if (choice.wait !== 'no') {
    const timeout = typeof choice.wait === 'number' ? longDeadline(choice.wait) : undefined;
    try {
      return await take({
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
    return await take({ ...options, shouldSkipBlockingWait: true, signal: choice.interrupted });
  } catch (error) {
    if (choice.interrupted.aborted) throw choice.interrupted.reason;
    if (heldByAnother(error)) {
      io.err(`dynamodb-lock: ${heldMessage(key, error.holder, choice.wait)}; not running the command\n`);
      return undefined;
    }
    throw error;
  }
}

function heldMessage(target: Target, holder: LockHolder | undefined, wait: AcquireChoice['wait']): string {
  const by = holder?.ownerName ?? 'someone else';
  if (typeof wait === 'number') return `did not get ${target.name} within ${formatDuration(wait)} (held by ${by})`;
  const takeover =
    holder === undefined
      ? ''
      : `; if that holder is gone, --wait or a --timeout longer than its lease (${formatDuration(holder.leaseDuration)}) takes ${target.takenOver} over`;
  return `${target.held(by)}${takeover}`;
}
