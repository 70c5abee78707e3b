/**
 * Watches a process's event loop: a tick that comes much later than due means
 * the process ran nothing for that long (a loaded host, a long GC, a SIGSTOP),
 * which no client can tell from a lost connection. Each such stall is logged
 * with its span, so that a lock lost while its worker could not run, or
 * while the runner's fault proxy could not pass its requests on, is not
 * blamed on the library.
 */
import type { ChaosEvent } from './events.js';

const TICK_MS = 50;
/** Lateness below this is ordinary scheduling on a busy machine, not logged. */
const LOGGED_STALL_MS = 250;

/** Starts watching; the returned function stops it (a worker is killed instead, the runner must let its process end). */
export function watchStalls(worker: string, log: (event: ChaosEvent) => void): () => void {
  let last = process.hrtime.bigint();
  const timer = setInterval(() => {
    const now = process.hrtime.bigint();
    if (now - last > BigInt(TICK_MS + LOGGED_STALL_MS) * 1_000_000n) {
      log({ type: 'stall', worker, fromNs: (last + BigInt(TICK_MS) * 1_000_000n).toString(), toNs: now.toString() });
    }
    last = now;
  }, TICK_MS);
  return () => clearInterval(timer);
}
