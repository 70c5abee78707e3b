/**
 * `npm run bench -- floor [--scenarios uncontended,concurrent,heartbeat,batch]
 * [--settings default,...|all] [--cycles N] [--rounds N] [--window S]
 * [--cpu-profile DIR] [--signals] [--json]`
 *
 * How much client CPU this library spends above the AWS SDK: the library
 * beside bare `@aws-sdk/client-dynamodb` calls that send exactly its
 * requests, on one DynamoDB Local, with the same client settings, in
 * interleaved rounds (the two sides take turns, in reversed order every other
 * round, after one unmeasured round; a full garbage collection before each
 * measured run).
 *
 * - `uncontended`: `acquireLock` + `release` of one free lock, one after the
 *   other (PutItem + DeleteItem), against the same two requests sent bare.
 * - `concurrent`: the same with 4 callers on 4 keys at once. The library
 *   runs with `heartbeatBatchSize: 1` here: by default, new-lock writes
 *   handed over in one tick of the event loop go out together as a batch of
 *   PartiQL INSERTs, which are not the requests the bare side sends.
 * - `heartbeat`: background heartbeats of 1 500 held locks, one UpdateItem
 *   each (`heartbeatBatchSize: 1`), against 32 loops of the bare UpdateItem
 *   (the default `heartbeatConcurrency`).
 * - `batch`: the same for 4 000 locks in batches (BatchExecuteStatement of 25 PartiQL
 *   UPDATEs), against 8 loops of bare batches (the scheduler's batches take at
 *   most a quarter of its 32 slots).
 *
 * A cycle is one acquire+release, or one heartbeat. The heartbeat periods
 * (600 ms for 1 500 locks, 1 250 ms for 4 000 in batches: 2 500 and 3 200
 * heartbeats/s wanted) are shorter than the server needs for a round of
 * them, so the library is always behind and sends as fast as its slots
 * allow, as the bare loops do. Each heartbeat
 * round acquires the locks anew (unmeasured) and closes the client after:
 * a client left holding them would heartbeat through the bare side's
 * rounds. `uncertainPct` counts heartbeats that also accept the RVN of an
 * earlier write cut off by its deadline (the period): requests the bare side
 * never sends, a sign of a machine too busy for the figures to mean much.
 *
 * The bare requests are built with the library's own pure request builders
 * (src/protocol/requests.ts and statements.ts), with the options the library
 * passes them. A check pass before the measured rounds records the commands
 * each side sends (operation and input, record version numbers and lock keys
 * masked) and stops the run if the two sides differ. The bare side passes no
 * options to `send` (no abort signal): what the library's signals cost is
 * part of its overhead. `--signals` adds a third side, the bare calls each
 * with the signal of a fresh AbortController, to tell that part apart.
 *
 * CPU is `process.cpuUsage()` (user + system) of this process; DynamoDB
 * Local is a separate Java process. `cpuMsPerCycle` is over all rounds,
 * `cpuMsMin`/`cpuMsMax` the best and worst round. `cpuVsFloor` is the
 * library's CPU per cycle ÷ the bare calls' under the same settings;
 * `cpuVsFloorMin` the same of the best rounds, steadier on a shared machine
 * (other work inflates CPU time too); `cpuVsDefault` a row's CPU per cycle
 * ÷ the same side's under the default settings. `load1` is the load average
 * when the scenario started. For the
 * settings compared, see bench/floor-settings.ts.
 */
import { randomUUID } from 'node:crypto';
import { mkdirSync } from 'node:fs';
import { loadavg } from 'node:os';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import {
  BatchExecuteStatementCommand,
  CreateTableCommand,
  DeleteItemCommand,
  DynamoDBClient,
  PutItemCommand,
  ResourceInUseException,
  UpdateItemCommand,
  waitUntilTableExists,
  type BatchStatementRequest,
  type UpdateItemCommandInput,
} from '@aws-sdk/client-dynamodb';
import { LockClient, type DynamoDBSender } from '../src/index.js';
import {
  buildAcquireRequest,
  buildHeartbeatRequest,
  buildHeartbeatStatement,
  buildReleaseRequest,
  withOldItemOnConditionFailure,
  type HeldLockState,
  type LockTable,
} from '../src/protocol/index.js';
import { CLIENT_SETTINGS, setBenchEnvironment, settingsNamed, type ClientSettings } from './floor-settings.js';
import { sleep, startCpuProfile } from './heartbeat-support.js';
import { type Row } from './report.js';

export const FLOOR_SCENARIOS = ['uncontended', 'concurrent', 'heartbeat', 'batch'] as const;
export type FloorScenario = (typeof FLOOR_SCENARIOS)[number];

export interface FloorOptions {
  readonly scenarios: readonly FloorScenario[];
  /** Names from bench/floor-settings.ts, or `all`. */
  readonly settings: readonly string[];
  /** Acquire+release cycles per side, over all rounds. */
  readonly cycles: number;
  readonly rounds: number;
  /** Seconds of each measured heartbeat window. */
  readonly windowSeconds: number;
  /** Writes a CPU profile of each measured run there. */
  readonly cpuProfileDir: string | undefined;
  /** Adds a third side: the bare calls, each with an abort signal. */
  readonly signals: boolean;
}

const TABLE: LockTable = { tableName: 'bench-floor', partitionKeyName: 'key', sortKeyName: undefined };
const OWNER = 'bench-floor';
const LEASE_MS = 20_000;
const CONCURRENT_CALLERS = 4;
/** Before the check pass: the library's code takes longer than the bare loop's to get fully optimised. */
const ACQUIRE_WARM_UP_CYCLES = 300;
/**
 * Locks held and heartbeat period: more heartbeats wanted per second than
 * the server serves (so the library is always behind), with a period (the
 * deadline of each heartbeat request) long enough that requests are not cut
 * off on a busy machine.
 */
interface HeartbeatLoad {
  readonly locks: number;
  readonly periodMs: number;
}
const SINGLE_LOAD: HeartbeatLoad = { locks: 1_500, periodMs: 600 };
const BATCH_LOAD: HeartbeatLoad = { locks: 4_000, periodMs: 1_250 };
/** The library's defaults: 32 heartbeat slots, batches in at most a quarter of them. */
const HEARTBEAT_CONCURRENCY = 32;
const BATCH_CONCURRENCY = 8;
const BATCH_SIZE = 25;
const CHECK_WINDOW_MS = 500;
/** Fine enough to tell apart costs of a few microseconds per call. */
const PROFILE_SAMPLING_US = 100;

const LIBRARY = 'dynamodb-lock';
const BARE = 'bare SDK';
/** The bare calls, each with an abort signal (of a fresh controller, with no timer), as the library sends its acquisition writes and releases. */
const BARE_SIGNALLED = 'bare SDK + signal';
type Side = typeof LIBRARY | typeof BARE | typeof BARE_SIGNALLED;
const SIDE_LABELS: Record<Side, string> = { [LIBRARY]: 'library', [BARE]: 'bare', [BARE_SIGNALLED]: 'bare-signalled' };

/**
 * The client as both sides see it: `send` passed through, counting calls and
 * heartbeats as they are sent and, during the check pass, recording commands.
 */
class BenchSender implements DynamoDBSender {
  calls = 0;
  heartbeats = 0;
  /**
   * Heartbeats that also accept the RVN of an earlier write whose outcome
   * was unknown (one cut off by its deadline): a client in trouble, sending
   * other requests than the bare side.
   */
  uncertainHeartbeats = 0;
  record: ((command: object) => void) | undefined;

  constructor(
    readonly client: DynamoDBClient,
    readonly signalEveryCall = false,
  ) {}

  /** The client's own stack, as a user's client shows it: the library puts the middleware that times its writes' departure there once. */
  get middlewareStack(): DynamoDBClient['middlewareStack'] {
    return this.client.middlewareStack;
  }

  send(command: object, options?: { readonly abortSignal?: AbortSignal }): Promise<unknown> {
    this.calls++;
    if (command instanceof UpdateItemCommand) {
      this.heartbeats++;
      if (acceptsUncertainRvns(command.input)) this.uncertainHeartbeats++;
    } else if (command instanceof BatchExecuteStatementCommand) {
      const statements = command.input.Statements ?? [];
      this.heartbeats += statements.length;
      this.uncertainHeartbeats += statements.filter(acceptsUncertainRvns).length;
    }
    this.record?.(command);
    const sendOptions = options ?? (this.signalEveryCall ? { abortSignal: new AbortController().signal } : undefined);
    return (this.client as { send(command: object, options?: object): Promise<unknown> }).send(command, sendOptions);
  }
}

/** Whether a heartbeat (UpdateItem input or PartiQL statement) also accepts RVNs of writes whose outcome is unknown. */
function acceptsUncertainRvns(request: UpdateItemCommandInput | BatchStatementRequest): boolean {
  return 'Statement' in request
    ? (request.Statement?.includes(' IN [') ?? false)
    : request.ExpressionAttributeValues?.[':uncertainRvn0'] !== undefined;
}

/** One measured run: set up unmeasured, run measured (resolving with the cycles done), finish unmeasured. */
interface Run {
  measured(): Promise<number>;
  finish(): Promise<void>;
}

/** A measured round, or the short run of the check pass. */
type RunSize = 'round' | 'check';

interface Arm {
  readonly side: Side;
  readonly settings: ClientSettings;
  readonly sender: BenchSender;
  prepare(size: RunSize): Promise<Run>;
  close(): Promise<void>;
}

interface Sample {
  cycles: number;
  calls: number;
  uncertain: number;
  cpuMs: number;
  wallMs: number;
  readonly cpuMsPerCycleByRound: number[];
}

export async function benchFloor(endpoint: string, options: FloorOptions): Promise<Row[]> {
  setBenchEnvironment();
  if (options.cpuProfileDir !== undefined) mkdirSync(options.cpuProfileDir, { recursive: true });
  const port = Number(new URL(endpoint).port);
  const settings = options.settings.includes('all') ? [...CLIENT_SETTINGS] : settingsNamed(options.settings);
  await createTable(port);
  const rows: Row[] = [];
  for (const scenario of options.scenarios) {
    rows.push(...(await benchScenario(scenario, settings, port, options)));
  }
  return rows;
}

async function benchScenario(
  scenario: FloorScenario,
  allSettings: readonly ClientSettings[],
  port: number,
  options: FloorOptions,
): Promise<Row[]> {
  const load1 = loadavg()[0] as number;
  process.stderr.write(
    `floor bench: ${scenario}, load average ${loadavg()
      .map((l) => l.toFixed(2))
      .join(' ')}\n`,
  );
  const sides: Side[] = options.signals ? [LIBRARY, BARE, BARE_SIGNALLED] : [LIBRARY, BARE];
  const arms = allSettings.flatMap((settings) => sides.map((side) => openArm(scenario, side, settings, port, options)));
  const samples = new Map<Arm, Sample>(arms.map((arm) => [arm, emptySample()]));
  try {
    await checkSameRequests(scenario, arms);
    // An unmeasured round first: the first run after the set-up was the slowest of every run, whichever side it was.
    for (const arm of arms)
      await measureRound(arm, emptySample(), `${scenario}-${arm.settings.name}-${SIDE_LABELS[arm.side]}-unmeasured`, {
        ...options,
        cpuProfileDir: undefined,
      });
    for (let round = 0; round < options.rounds; round++) {
      for (const arm of round % 2 === 0 ? arms : [...arms].reverse()) {
        await measureRound(arm, samples.get(arm) as Sample, `${scenario}-${arm.settings.name}-${SIDE_LABELS[arm.side]}-${round}`, options);
      }
    }
  } finally {
    for (const arm of arms) await arm.close();
  }
  return arms.map((arm) => summarize(scenario, arm, samples, arms, load1));
}

const emptySample = (): Sample => ({ cycles: 0, calls: 0, uncertain: 0, cpuMs: 0, wallMs: 0, cpuMsPerCycleByRound: [] });

const gc = collectGarbage();

async function measureRound(arm: Arm, sample: Sample, name: string, options: FloorOptions): Promise<void> {
  const run = await arm.prepare('round');
  try {
    gc();
    const calls = arm.sender.calls;
    const uncertain = arm.sender.uncertainHeartbeats;
    const stopProfile = await startCpuProfile(name, options.cpuProfileDir, PROFILE_SAMPLING_US);
    const cpu = process.cpuUsage();
    const started = performance.now();
    const cycles = await run.measured();
    const wallMs = performance.now() - started;
    const used = process.cpuUsage(cpu);
    await stopProfile();
    const cpuMs = (used.user + used.system) / 1000;
    sample.cycles += cycles;
    sample.calls += arm.sender.calls - calls;
    sample.uncertain += arm.sender.uncertainHeartbeats - uncertain;
    sample.cpuMs += cpuMs;
    sample.wallMs += wallMs;
    sample.cpuMsPerCycleByRound.push(cpuMs / cycles);
    process.stderr.write(
      `floor bench: ${name}: ${cycles} cycles, ${(cpuMs / cycles).toFixed(3)} ms CPU each (${(used.system / 1000 / cycles).toFixed(3)} system), ${((cycles / wallMs) * 1000).toFixed(0)}/s\n`,
    );
  } finally {
    await run.finish();
  }
}

function summarize(scenario: FloorScenario, arm: Arm, samples: Map<Arm, Sample>, arms: readonly Arm[], load1: number): Row {
  const sample = samples.get(arm) as Sample;
  const cpuPerCycle = (a: Arm | undefined): number | undefined => {
    const s = a === undefined ? undefined : samples.get(a);
    return s === undefined ? undefined : s.cpuMs / s.cycles;
  };
  const floor = arms.find((a) => a.side === BARE && a.settings === arm.settings);
  const sameSideDefault = arms.find((a) => a.side === arm.side && a.settings.name === 'default');
  const floorSample = floor === undefined ? undefined : samples.get(floor);
  const own = sample.cpuMs / sample.cycles;
  const rate = (sample.cycles / sample.wallMs) * 1000;
  return {
    scenario,
    settings: arm.settings.name,
    client: arm.side,
    cycles: sample.cycles,
    callsPerCycle: sample.calls / sample.cycles,
    cpuMsPerCycle: own,
    cpuMsMin: Math.min(...sample.cpuMsPerCycleByRound),
    cpuMsMax: Math.max(...sample.cpuMsPerCycleByRound),
    cyclesPerSecond: rate,
    cpuVsFloor: ratio(own, cpuPerCycle(floor)),
    cpuVsFloorMin: floorSample === undefined ? null : Math.min(...sample.cpuMsPerCycleByRound) / Math.min(...floorSample.cpuMsPerCycleByRound),
    rateVsFloor: floorSample === undefined ? null : rate / ((floorSample.cycles / floorSample.wallMs) * 1000),
    cpuVsDefault: ratio(own, cpuPerCycle(sameSideDefault)),
    uncertainPct: (100 * sample.uncertain) / sample.cycles,
    load1,
  };
}

const ratio = (a: number, b: number | undefined): number | null => (b === undefined ? null : a / b);

/** `gc()` without --expose-gc on the command line. */
function collectGarbage(): () => void {
  setFlagsFromString('--expose-gc');
  return runInNewContext('gc') as () => void;
}

function openArm(scenario: FloorScenario, side: Side, settings: ClientSettings, port: number, options: FloorOptions): Arm {
  const sender = new BenchSender(new DynamoDBClient(settings.config(port)), side === BARE_SIGNALLED);
  const perRound = Math.max(1, Math.ceil(options.cycles / options.rounds));
  const windowMs = options.windowSeconds * 1000;
  const base = { side, settings, sender };
  switch (scenario) {
    case 'uncontended':
      return side === LIBRARY ? libraryCycles(base, 1, perRound) : bareCycles(base, 1, perRound);
    case 'concurrent':
      return side === LIBRARY ? libraryCycles(base, CONCURRENT_CALLERS, perRound) : bareCycles(base, CONCURRENT_CALLERS, perRound);
    case 'heartbeat':
      return side === LIBRARY ? libraryHeartbeats(base, 1, SINGLE_LOAD, windowMs) : bareHeartbeats(base, 1, SINGLE_LOAD, windowMs);
    case 'batch':
      return side === LIBRARY
        ? libraryHeartbeats(base, BATCH_SIZE, BATCH_LOAD, windowMs)
        : bareHeartbeats(base, BATCH_SIZE, BATCH_LOAD, windowMs);
  }
}

type ArmBase = Pick<Arm, 'side' | 'settings' | 'sender'>;

const callerKey = (caller: number): string => `floor-acquire-${caller}`;
const heartbeatKey = (i: number): string => `floor-heartbeat-${String(i).padStart(4, '0')}`;

/** Runs `callers` loops at once until `count` cycles are done between them. */
async function inParallel(callers: number, count: number, cycle: (caller: number) => Promise<void>): Promise<number> {
  let started = 0;
  await Promise.all(
    Array.from({ length: callers }, async (_, caller) => {
      while (started < count) {
        started++;
        await cycle(caller);
      }
    }),
  );
  return started;
}

/** An acquire+release side: `cycle` is one caller's acquire and release; warmed up before its first run. */
function cyclesArm(base: ArmBase, callers: number, perRound: number, cycle: (caller: number) => Promise<void>, close: () => Promise<void>): Arm {
  let warm = false;
  return {
    ...base,
    prepare: async (size) => {
      if (!warm) await inParallel(callers, ACQUIRE_WARM_UP_CYCLES, cycle);
      warm = true;
      return { measured: () => inParallel(callers, size === 'round' ? perRound : callers, cycle), finish: async () => {} };
    },
    close,
  };
}

function libraryCycles(base: ArmBase, callers: number, perRound: number): Arm {
  // One caller's writes never meet another's in a batch; several callers' would (see `concurrent` above).
  const heartbeatBatchSize = callers === 1 ? undefined : 1;
  const client = new LockClient({
    dynamoDB: base.sender,
    tableName: TABLE.tableName,
    ownerName: OWNER,
    leaseDuration: LEASE_MS,
    heartbeatBatchSize,
  });
  const cycle = async (caller: number): Promise<void> => {
    const lock = await client.acquireLock(callerKey(caller));
    await lock.release();
  };
  return cyclesArm(base, callers, perRound, cycle, async () => {
    await client.close();
    base.sender.client.destroy();
  });
}

/** The library's new-lock write: the PutItem of a free lock, asking for the old item should its condition fail. */
async function bareAcquire(sender: BenchSender, key: string): Promise<HeldLockState> {
  const recordVersionNumber = randomUUID();
  const request = withOldItemOnConditionFailure(
    buildAcquireRequest(
      TABLE,
      {
        partitionKey: key,
        sortKey: undefined,
        ownerName: OWNER,
        leaseDurationMs: LEASE_MS,
        recordVersionNumber,
        data: undefined,
        additionalAttributes: {},
      },
      { kind: 'absent' },
      { updateExistingLockRecord: undefined },
    ),
  );
  await sender.send(new PutItemCommand(request.input as ConstructorParameters<typeof PutItemCommand>[0]));
  return { partitionKey: key, sortKey: undefined, ownerName: OWNER, recordVersionNumber };
}

/** The library's release of a lock it holds: DeleteItem under the holder's condition. */
async function bareRelease(sender: BenchSender, held: HeldLockState): Promise<void> {
  const request = withOldItemOnConditionFailure(
    buildReleaseRequest(TABLE, held, { deleteLock: true, data: undefined, newRecordVersionNumber: undefined, refuseReleased: true }),
  );
  await sender.send(new DeleteItemCommand(request.input as ConstructorParameters<typeof DeleteItemCommand>[0]));
}

function bareCycles(base: ArmBase, callers: number, perRound: number): Arm {
  const cycle = async (caller: number): Promise<void> => bareRelease(base.sender, await bareAcquire(base.sender, callerKey(caller)));
  return cyclesArm(base, callers, perRound, cycle, async () => base.sender.client.destroy());
}

function libraryHeartbeats(base: ArmBase, batchSize: number, load: HeartbeatLoad, windowMs: number): Arm {
  return {
    ...base,
    prepare: async (size) => {
      const client = new LockClient({
        dynamoDB: base.sender,
        tableName: TABLE.tableName,
        ownerName: OWNER,
        leaseDuration: LEASE_MS,
        heartbeatPeriod: load.periodMs,
        heartbeatConcurrency: HEARTBEAT_CONCURRENCY,
        heartbeatBatchSize: batchSize,
      });
      let lost = 0;
      client.on('lost', () => lost++);
      const keys = Array.from({ length: load.locks }, (_, i) => heartbeatKey(i));
      await inParallel(HEARTBEAT_CONCURRENCY, keys.length, async () => {
        await client.acquireLock(keys.pop() as string);
      });
      // A period after the last acquisition every lock is due: the scheduler is sending flat out.
      await sleep(load.periodMs);
      return {
        measured: async () => {
          const before = base.sender.heartbeats;
          await sleep(size === 'round' ? windowMs : CHECK_WINDOW_MS);
          return base.sender.heartbeats - before;
        },
        finish: async () => {
          await client.close();
          if (lost > 0) throw new Error(`floor bench: the library lost ${lost} locks while heartbeating`);
        },
      };
    },
    close: async () => base.sender.client.destroy(),
  };
}

function bareHeartbeats(base: ArmBase, batchSize: number, load: HeartbeatLoad, windowMs: number): Arm {
  const { sender } = base;
  const concurrency = batchSize === 1 ? HEARTBEAT_CONCURRENCY : BATCH_CONCURRENCY;
  return {
    ...base,
    prepare: async (size) => {
      const held: HeldLockState[] = new Array<HeldLockState>(load.locks);
      let next = 0;
      await inParallel(HEARTBEAT_CONCURRENCY, load.locks, async () => {
        const i = next++;
        held[i] = await bareAcquire(sender, heartbeatKey(i));
      });
      const single = async (i: number): Promise<void> => {
        const lock = held[i] as HeldLockState;
        const newRecordVersionNumber = randomUUID();
        const request = withOldItemOnConditionFailure(
          buildHeartbeatRequest(TABLE, lock, {
            newRecordVersionNumber,
            refuseReleased: true,
            leaseDurationMs: LEASE_MS,
            data: undefined,
            deleteData: undefined,
          }),
        );
        await sender.send(new UpdateItemCommand(request.input as ConstructorParameters<typeof UpdateItemCommand>[0]));
        held[i] = { ...lock, recordVersionNumber: newRecordVersionNumber };
      };
      const batch = async (first: number): Promise<void> => {
        const locks = held.slice(first, first + batchSize);
        const rvns = locks.map(() => randomUUID());
        const statements: BatchStatementRequest[] = locks.map((lock, j) =>
          buildHeartbeatStatement(TABLE, lock, { newRecordVersionNumber: rvns[j] as string, leaseDurationMs: LEASE_MS, refuseReleased: true }),
        );
        const output = await sender.send(new BatchExecuteStatementCommand({ Statements: statements }));
        const failed = (output as { Responses?: { Error?: unknown }[] }).Responses?.find((response) => response.Error !== undefined);
        if (failed !== undefined) throw new Error(`floor bench: a bare heartbeat statement failed: ${JSON.stringify(failed.Error)}`);
        locks.forEach((lock, j) => (held[first + j] = { ...lock, recordVersionNumber: rvns[j] as string }));
      };
      let cursor = 0;
      return {
        measured: async () => {
          const before = sender.heartbeats;
          const endAt = performance.now() + (size === 'round' ? windowMs : CHECK_WINDOW_MS);
          await Promise.all(
            Array.from({ length: concurrency }, async () => {
              while (performance.now() < endAt) {
                const first = cursor;
                cursor = (cursor + batchSize) % load.locks;
                await (batchSize === 1 ? single(first) : batch(first));
              }
            }),
          );
          return sender.heartbeats - before;
        },
        finish: async () => {
          let i = 0;
          await inParallel(HEARTBEAT_CONCURRENCY, load.locks, () => bareRelease(sender, held[i++] as HeldLockState));
        },
      };
    },
    close: async () => sender.client.destroy(),
  };
}

/**
 * Runs each side briefly with its commands recorded and compares what they
 * sent: the same operations with the same inputs, but for record version
 * numbers and lock keys.
 */
async function checkSameRequests(scenario: FloorScenario, arms: readonly Arm[]): Promise<void> {
  const sent = new Map<Arm, string[]>();
  for (const arm of arms) {
    const shapes = new Set<string>();
    const run = await arm.prepare('check');
    // Only what the run sends: not the acquisitions of a heartbeat run's set-up, nor the releases after.
    arm.sender.record = (command) => {
      for (const shape of shapesOf(command)) shapes.add(shape);
    };
    try {
      await run.measured();
    } finally {
      arm.sender.record = undefined;
      await run.finish();
    }
    sent.set(arm, [...shapes].sort());
  }
  for (const arm of arms) {
    const twin = arms.find((a) => a.settings === arm.settings && a.side !== arm.side);
    const mine = sent.get(arm) ?? [];
    const theirs = (twin === undefined ? undefined : sent.get(twin)) ?? [];
    if (mine.length === 0 || JSON.stringify(mine) !== JSON.stringify(theirs)) {
      throw new Error(
        `floor bench: in ${scenario} (${arm.settings.name}) the two sides sent different requests:\n${mine.join('\n')}\n---\n${theirs.join('\n')}`,
      );
    }
  }
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
const BENCH_KEY = /^floor-(acquire|heartbeat)-\d+$/;

/**
 * What a command sends, with what differs from cycle to cycle masked; a
 * batch as its statements. Heartbeats that accept uncertain RVNs are left
 * out: `uncertainPct` reports them.
 */
function shapesOf(command: object): string[] {
  const mask = (_: string, value: unknown): unknown =>
    typeof value === 'string' && UUID.test(value) ? '<rvn>' : typeof value === 'string' && BENCH_KEY.test(value) ? '<key>' : value;
  const name = command.constructor.name;
  if (command instanceof BatchExecuteStatementCommand) {
    const statements = (command.input.Statements ?? []).filter((statement) => !acceptsUncertainRvns(statement));
    return statements.map((statement) => `${name} statement ${JSON.stringify(statement, mask)}`);
  }
  if (command instanceof UpdateItemCommand && acceptsUncertainRvns(command.input)) return [];
  return [`${name} ${JSON.stringify((command as { input: unknown }).input, mask)}`];
}

async function createTable(port: number): Promise<void> {
  const dynamoDB = new DynamoDBClient({ endpoint: `http://127.0.0.1:${port}` });
  try {
    await dynamoDB.send(
      new CreateTableCommand({
        TableName: TABLE.tableName,
        AttributeDefinitions: [{ AttributeName: TABLE.partitionKeyName, AttributeType: 'S' }],
        KeySchema: [{ AttributeName: TABLE.partitionKeyName, KeyType: 'HASH' }],
        BillingMode: 'PAY_PER_REQUEST',
      }),
    );
  } catch (error) {
    if (!(error instanceof ResourceInUseException)) throw error;
  }
  await waitUntilTableExists({ client: dynamoDB, maxWaitTime: 60 }, { TableName: TABLE.tableName });
  dynamoDB.destroy();
}
