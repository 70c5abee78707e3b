/**
 * What `--load` changes in a chaos run: its defaults, the settings its
 * workers get, and the violations its own checks add.
 */
import type { LoadCheckReport } from './load-check.js';
import type { LoadShape } from './load-worker.js';

/** What a load worker does at once: hundreds of held locks, and as many asked for in waves and bursts. */
export const DEFAULT_LOAD_SHAPE: LoadShape = { held: 200, waits: 100, burst: 100, hotKeys: 4, elections: 2 };

/**
 * Where a load run's defaults differ from the plain run's: the lease and
 * heartbeat period of a service holding many locks (four heartbeats a
 * lease), fewer workers (each is a busy client), and process faults further
 * apart (each costs a worker hundreds of locks to take back).
 */
export const LOAD_DEFAULTS = {
  workers: 3,
  leaseMs: 3_000,
  heartbeatMs: 750,
  faultGapMs: [2_000, 6_000] as const,
};

/** A load run's own violations: held locks lost outside the injected faults, and calls that outlived their bound. */
export function loadViolations(report: LoadCheckReport): string[] {
  const violations: string[] = [];
  const { unprovoked } = report.heldLocksLost;
  if (unprovoked.total > 0) {
    violations.push(
      `${unprovoked.total} held lock(s) lost outside the injected faults ${JSON.stringify(unprovoked.byKind)}, first: ` +
        unprovoked.first.map((loss) => `${loss.worker} ${loss.key} ${loss.kind}`).join(', '),
    );
  }
  const worst = report.worstOverdue;
  if (worst !== undefined) {
    violations.push(
      `${report.acquisitionsOverdue} acquisition call(s) outlived their bound; worst ${worst.worker} ${worst.key}: ` +
        `${worst.ms} ms of ${worst.boundMs} ms${worst.settled ? '' : ', still pending'}`,
    );
  }
  if (report.acquisitionCalls.calls === 0) violations.push('no acquisition call tallied: the load run proved nothing');
  return violations;
}
