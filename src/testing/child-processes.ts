/**
 * Never leave a java process behind: live children are killed when Node
 * exits, and on SIGINT, SIGTERM and SIGHUP when nobody else handles them (the
 * signal is then raised again, so that the process still ends as it would have).
 */
import type { ChildProcess } from 'node:child_process';

const live = new Set<ChildProcess>();
const FATAL_SIGNALS = ['SIGINT', 'SIGTERM', 'SIGHUP'] as const;

export function isRunning(child: ChildProcess): boolean {
  return child.pid !== undefined && child.exitCode === null && child.signalCode === null;
}

function killAll(): void {
  for (const child of live) {
    if (isRunning(child)) child.kill('SIGKILL');
  }
}

function onFatalSignal(signal: NodeJS.Signals): void {
  if (process.listenerCount(signal) > 1) return; // someone else's to handle; 'exit' still cleans up
  killAll();
  uninstall();
  process.kill(process.pid, signal);
}

function install(): void {
  process.on('exit', killAll);
  for (const signal of FATAL_SIGNALS) process.on(signal, onFatalSignal);
}

function uninstall(): void {
  process.off('exit', killAll);
  for (const signal of FATAL_SIGNALS) process.off(signal, onFatalSignal);
}

/** Kills `child` with this process; forgets it once it has exited. */
export function killOnExit(child: ChildProcess, exited: Promise<void>): void {
  if (live.size === 0) install();
  live.add(child);
  void exited.then(() => {
    if (live.delete(child) && live.size === 0) uninstall();
  });
}
