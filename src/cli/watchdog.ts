/**
 * The watchdog of `dynamodb-lock run`: a small process of its own, in a
 * session of its own, that starts the command and makes sure the command's
 * whole process group never outlives the lock, whatever happens to
 * `dynamodb-lock` itself.
 *
 * It gets the lock's deadlines from `run` over an IPC channel, renewed after
 * every confirmed heartbeat, and acts on them by its own timers: SIGTERM to
 * the group when the lock's safe time ends without a renewal, SIGKILL a grace
 * period later. Should `run` die (SIGKILL included) or hang (SIGSTOP, a
 * stalled event loop), the channel closes or the renewals stop, and the group
 * is stopped all the same. When the command exits, whatever it left running
 * in its group is killed before `run` hears of the exit and releases the lock.
 *
 * Signals that stop a service (SIGTERM, SIGINT, SIGHUP, SIGQUIT) do not stop
 * the watchdog: a service manager may send them to every process of the
 * service at once, `run` passes them on to the command, and the watchdog
 * must be there to let the command stop gracefully within the lock's safe
 * time, and to kill it when that time ends. It exits only after the command.
 *
 * Started by watched-command.ts only; it takes no arguments.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { setLongTimeout, type LongTimer } from './long-timer.js';
import { signalProcessGroup } from './process-group.js';
import { machineClockMs, RELAYED_SIGNALS, type Deadlines, type FromWatchdog, type ToWatchdog } from './watchdog-messages.js';

let command: ChildProcess | undefined;
let deadlines: Deadlines = { termAt: Infinity, killAt: Infinity };
let graceMs = 0;
let terminating = false;
let timer: LongTimer | undefined;

function tell(message: FromWatchdog, then?: () => void): void {
  if (process.connected) process.send?.(message, undefined, {}, () => then?.());
  else then?.();
}

function signalGroup(signal: NodeJS.Signals): void {
  if (command?.pid !== undefined) signalProcessGroup(command.pid, signal);
}

/** One timer, for the next deadline to act on. */
function schedule(): void {
  timer?.clear();
  const next = terminating ? deadlines.killAt : deadlines.termAt;
  if (Number.isFinite(next)) timer = setLongTimeout(check, next - machineClockMs());
}

function check(): void {
  const now = machineClockMs();
  if (!terminating && now >= deadlines.termAt) {
    tell({ type: 'expired' });
    terminate();
  } else if (terminating && now >= deadlines.killAt) {
    signalGroup('SIGKILL');
  } else {
    schedule();
  }
}

/** SIGTERM now, SIGKILL after the grace period or at the kill deadline, whichever is first. */
function terminate(): void {
  terminating = true;
  signalGroup('SIGTERM');
  deadlines = { termAt: deadlines.termAt, killAt: Math.min(deadlines.killAt, machineClockMs() + graceMs) };
  schedule();
}

function start(message: Extract<ToWatchdog, { type: 'start' }>): void {
  graceMs = message.graceMs;
  const notStarted = (error: NodeJS.ErrnoException): void =>
    tell({ type: 'spawn-error', code: error.code, message: error.message }, () => process.exit(0));
  let child: ChildProcess;
  try {
    // detached: a session and process group of its own, led by the command, so that one signal reaches all it starts.
    child = spawn(message.program, [...message.args], { stdio: 'inherit', detached: true, env: message.env });
  } catch (error) {
    // Node throws some failures (ENOTDIR, ENAMETOOLONG, E2BIG) at once and reports others (ENOENT, EACCES) as events.
    notStarted(error as NodeJS.ErrnoException);
    return;
  }
  command = child;
  child.once('error', (error: NodeJS.ErrnoException) => {
    if (child.pid === undefined) notStarted(error);
  });
  child.once('exit', (code, signal) => {
    timer?.clear();
    signalGroup('SIGKILL'); // what the command left running in its group
    tell({ type: 'exited', code, signal }, () => process.exit(0));
  });
  if (child.pid !== undefined) {
    tell({ type: 'started', pid: child.pid });
    deadlines = message.deadlines;
    schedule();
  }
}

process.on('message', (message: ToWatchdog) => {
  switch (message.type) {
    case 'start':
      if (command === undefined) start(message);
      return;
    case 'renew':
      if (terminating) return;
      deadlines = message.deadlines;
      schedule();
      return;
    case 'stop':
      terminate();
      return;
    case 'signal':
      signalGroup(message.signal);
      return;
  }
});

// `run` is gone: nobody heartbeats the lock any more.
process.on('disconnect', () => {
  if (command === undefined) process.exit(0);
  terminate();
});

// Left to `run`, which passes them on to the command: dying of one would leave the command unwatched.
for (const signal of RELAYED_SIGNALS) process.on(signal, () => undefined);
