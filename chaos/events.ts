/**
 * What the chaos run logs, one JSON object per line. Every time is
 * `process.hrtime.bigint()` in nanoseconds, as a decimal string: on Linux it
 * is CLOCK_MONOTONIC, one clock for every process on the machine, so times
 * logged by different workers and the driver compare directly.
 */

/** A worker calls acquireLock for `key`: from here on it is asking for the key. */
export interface WantingEvent {
  readonly type: 'wanting';
  readonly worker: string;
  readonly key: string;
  readonly atNs: string;
}

/** A worker's acquireLock resolved: its hold of `key` (identified by `rvn`) starts. */
export interface AcquiredEvent {
  readonly type: 'acquired';
  readonly worker: string;
  readonly key: string;
  readonly rvn: string;
  readonly atNs: string;
}

/** An act inside the critical section, logged with the instant its validity check passed. */
export interface ActEvent {
  readonly type: 'act';
  readonly worker: string;
  readonly key: string;
  /** The RVN of the acquisition this act belongs to. */
  readonly acquiredRvn: string;
  readonly checkedAtNs: string;
}

/** The worker found its lock lost inside the critical section and stopped acting. */
export interface LostEvent {
  readonly type: 'lost';
  readonly worker: string;
  readonly key: string;
  readonly acquiredRvn: string;
  readonly atNs: string;
  readonly kind: string;
  /** Why, as the lock client told it (load workers). */
  readonly reason?: string;
}

/** The worker's release call returned (whatever its outcome): its hold of `key` is over. */
export interface ReleasedEvent {
  readonly type: 'released';
  readonly worker: string;
  readonly key: string;
  readonly acquiredRvn: string;
  readonly atNs: string;
}

/** `--groups` runs: a group worker calls acquireLocks for `keys`, all of them or none. */
export interface GroupWantingEvent {
  readonly type: 'groupWanting';
  readonly worker: string;
  readonly keys: readonly string[];
  readonly atNs: string;
}

/** `--groups` runs: acquireLocks resolved; one hold per member starts, each named by its RVN. */
export interface GroupAcquiredEvent {
  readonly type: 'groupAcquired';
  readonly worker: string;
  readonly members: readonly { readonly key: string; readonly rvn: string }[];
  readonly atNs: string;
}

/** `--groups` runs: an act under the whole group, once the check of every member passed (`acquiredRvns`: the members it checked). */
export interface GroupActEvent {
  readonly type: 'groupAct';
  readonly worker: string;
  readonly acquiredRvns: readonly string[];
  readonly checkedAtNs: string;
}

/** `--semaphores` runs: a semaphore worker asks for `count` of the `permits` permits of `semaphore`, all or none. */
export interface PermitsWantingEvent {
  readonly type: 'permitsWanting';
  readonly worker: string;
  readonly semaphore: string;
  readonly permits: number;
  readonly count: number;
  readonly atNs: string;
}

/** `--semaphores` runs: acquirePermit(s) resolved; one hold per permit starts, each named by its RVN; acts are `groupAct`s over all of them. */
export interface PermitsAcquiredEvent {
  readonly type: 'permitsAcquired';
  readonly worker: string;
  readonly semaphore: string;
  readonly members: readonly { readonly key: string; readonly rvn: string }[];
  readonly atNs: string;
}

/**
 * `--gc` runs: a DeleteItem call of the gc worker's `collectAbandoned`,
 * conditioned on `rvn`: `sentAtNs` before its first attempt, `atNs` when
 * the call settled; `deleted` when DynamoDB applied it, else whether it was
 * refused with the item there (`taken`), or ended otherwise (`other`: gone,
 * no answer, …).
 */
export interface GcDeleteEvent {
  readonly type: 'gcDelete';
  readonly worker: string;
  readonly key: string;
  readonly rvn: string;
  readonly sentAtNs: string;
  readonly atNs: string;
  readonly outcome: 'deleted' | 'taken' | 'other';
}

/** `--gc` runs: a `collectAbandoned` pass ended: how many items it deleted and left (by reason), or the error it failed with. */
export interface GcPassEvent {
  readonly type: 'gcPass';
  readonly worker: string;
  readonly deleted: number;
  readonly left: Record<string, number>;
  readonly error?: string;
  readonly atNs: string;
}

/**
 * How one write of a `--fenced` run to the key's counter item ended:
 * - `committed`: DynamoDB applied it;
 * - `refused`: the lock's check failed in DynamoDB (the lock had moved), nothing applied;
 * - `refusedLocally`: the lock client refused it before sending (the lock was already lost);
 * - `canceled`: DynamoDB canceled it for another reason (a conflict), nothing applied;
 * - `fencedOut`: the lock's check passed, but the counter item held a larger fencing token than this hold's;
 * - `unknown`: no definite answer, it may have been applied;
 * - `failed`: refused as a whole (throttled on its only attempt, …), nothing applied.
 */
export type WriteOutcome = 'committed' | 'refused' | 'refusedLocally' | 'canceled' | 'fencedOut' | 'unknown' | 'failed';

/** A write to the key's counter item (`--fenced` runs). `late`: sent after a pause the worker ignored on purpose. */
export interface WriteEvent {
  readonly type: 'write';
  readonly worker: string;
  readonly key: string;
  readonly acquiredRvn: string;
  readonly late: boolean;
  readonly outcome: WriteOutcome;
  readonly atNs: string;
}

/** The driver's fault on a worker process: `kill` (SIGKILL), `stop` (SIGSTOP), `cont` (SIGCONT), `start`. */
export interface ProcessEvent {
  readonly type: 'kill' | 'stop' | 'cont' | 'start';
  readonly worker: string;
  readonly atNs: string;
}

/**
 * `--load` runs: an acquisition call that had not settled within its bound
 * (`boundMs`: its wait, the holder's lease, the cut-off that follows, and the
 * margin), by the worker's clock, paused time included; the checker takes
 * the driver's pauses out. Logged when the call settles late, and while it is
 * pending each time another bound has passed.
 */
export interface OverdueEvent {
  readonly type: 'overdue';
  readonly worker: string;
  readonly key: string;
  /** When the call was made: with `worker` and `key`, names the call. */
  readonly startNs: string;
  readonly atNs: string;
  readonly boundMs: number;
  readonly settled: boolean;
}

/** `--load` runs: a worker's acquisition calls so far, by how they ended. */
export interface TallyEvent {
  readonly type: 'tally';
  readonly worker: string;
  /** Calls made; `granted` resolved with a lock; `refused` ended because someone else held it; `failed` by error name. */
  readonly calls: number;
  readonly granted: number;
  readonly refused: number;
  readonly failed: Record<string, number>;
}

/** `--load` runs: the worker's event loop ran nothing in [fromNs, toNs) (chaos/stall-watch.ts). */
export interface StallEvent {
  readonly type: 'stall';
  readonly worker: string;
  readonly fromNs: string;
  readonly toNs: string;
}

/** `--load` runs: a background heartbeat attempt of a held lock failed (its `heartbeatError` event). */
export interface HeartbeatErrorEvent {
  readonly type: 'heartbeatError';
  readonly worker: string;
  readonly key: string;
  readonly atNs: string;
  /** The error's name. */
  readonly error: string;
  readonly willRetry: boolean;
}

/** `--load` runs: a confirmed background heartbeat that started `lagMs` after it was due (logged from half a period on). */
export interface LateHeartbeatEvent {
  readonly type: 'lateHeartbeat';
  readonly worker: string;
  readonly key: string;
  readonly atNs: string;
  readonly lagMs: number;
}

export type ChaosEvent =
  | WantingEvent
  | AcquiredEvent
  | ActEvent
  | LostEvent
  | ReleasedEvent
  | GroupWantingEvent
  | GroupAcquiredEvent
  | GroupActEvent
  | PermitsWantingEvent
  | PermitsAcquiredEvent
  | GcDeleteEvent
  | GcPassEvent
  | WriteEvent
  | ProcessEvent
  | OverdueEvent
  | TallyEvent
  | StallEvent
  | HeartbeatErrorEvent
  | LateHeartbeatEvent;

export const nowNs = (): string => process.hrtime.bigint().toString();
