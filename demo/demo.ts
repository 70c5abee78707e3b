/**
 * `npm start`: leader election, live, against an embedded DynamoDB Local.
 *
 * Three worker processes campaign for leadership of one key. The demo shows
 * who leads and each of the leader's heartbeats, kills the leader with
 * SIGKILL, measures how long the takeover took against the lease, lets the
 * new leader resign to show that a hand-over needs no lease, checks from the
 * workers' logs that two of them never led at the same instant, and stops
 * everything it started: by itself within a minute, on Ctrl-C, or on failure.
 */
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { Candidates, type CandidateEvent } from '../test-kit/election-candidates.js';
import { leadershipTerms, overlappingTerms } from '../test-kit/leadership-terms.js';
import { startDynamoDBLocal, type DynamoDBLocal } from '../src/testing/index.js';
import { LeaderElection, LockClient } from '../src/index.js';
import { TerminalView } from './terminal-view.js';
import { WorkerBoard } from './worker-board.js';

const LEASE_MS = 3_000;
const HEARTBEAT_MS = 1_000;
const REFRESH_MS = 250;
const TABLE = 'demo-locks';
const KEY = 'scheduler-leader';
const WORKERS = new Map([
  ['worker-1', '127.0.0.1:9001'],
  ['worker-2', '127.0.0.1:9002'],
  ['worker-3', '127.0.0.1:9003'],
]);
/** The demo gives up (and still cleans up) rather than run past a minute. */
const DEADLINE_MS = 55_000;
const STEP_TIMEOUT_MS = 30_000;

// The AWS SDK warns under Node 20 about its plans for 2027; in the middle of the live view that is only noise.
process.env['AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED'] ??= 'true';

const view = new TerminalView();
const board = new WorkerBoard(WORKERS);
const stop = new AbortController();
const seconds = (ms: number): string => `${(ms / 1_000).toFixed(2)} s`;
const msBetween = (from: bigint, to: string): number => Number(BigInt(to) - from) / 1e6;

// `on`, not `once`: while this listener is registered, the DynamoDB Local module leaves the signal
// to us and we clean up; a second Ctrl-C ends the demo at once.
const onInterrupt = (): void => {
  if (stop.signal.aborted) process.exit(130);
  stop.abort(new Error('interrupted (Ctrl-C)'));
};
process.on('SIGINT', onInterrupt);
const deadline = setTimeout(() => stop.abort(new Error(`still running after ${DEADLINE_MS / 1_000} s`)), DEADLINE_MS);

/** Resolves with `promise`, or rejects as soon as the demo is stopped. */
function unlessStopped<T>(promise: Promise<T>): Promise<T> {
  return new Promise((resolve, reject) => {
    const onStop = (): void => reject(stop.signal.reason);
    if (stop.signal.aborted) onStop();
    stop.signal.addEventListener('abort', onStop, { once: true });
    promise.then(resolve, reject).finally(() => stop.signal.removeEventListener('abort', onStop));
  });
}

let local: DynamoDBLocal | undefined;
let candidates: Candidates | undefined;
let dynamoDB: DynamoDBClient | undefined;
let observer: LockClient | undefined;
let exitCode = 0;

try {
  view.line('demo', 'starting DynamoDB Local (in memory, on 127.0.0.1)…');
  local = await unlessStopped(startDynamoDBLocal());
  dynamoDB = new DynamoDBClient({
    endpoint: local.endpoint,
    region: 'us-east-1',
    credentials: { accessKeyId: 'demo', secretAccessKey: 'demo' },
  });
  observer = new LockClient({ dynamoDB, tableName: TABLE, ownerName: 'observer' });
  await unlessStopped(observer.createLockTable({ ifNotExists: true }));
  view.line('demo', `DynamoDB Local listens on ${local.endpoint}; table "${TABLE}" is ACTIVE`);
  view.line('demo', `lease ${seconds(LEASE_MS)}, heartbeat every ${seconds(HEARTBEAT_MS)}, waiting workers read every ${REFRESH_MS} ms`);

  const workers = new Candidates({
    endpoint: local.endpoint,
    table: TABLE,
    key: KEY,
    leaseMs: LEASE_MS,
    heartbeatMs: HEARTBEAT_MS,
    refreshMs: REFRESH_MS,
  });
  candidates = workers;
  workers.onEvent((event: CandidateEvent) => {
    const text = board.apply(event);
    if (text !== undefined) view.line(event.name, text);
    view.status(board.status());
  });
  view.line('demo', `starting ${WORKERS.size} worker processes; each campaigns for "${KEY}"`);
  for (const [name, address] of WORKERS) workers.start(name, address);

  // An observer that never campaigns: it reads who leads, and the leader's data (its address).
  const election = new LeaderElection(observer, KEY, { pollInterval: 250 });
  const following = (async () => {
    for await (const leader of election.observe({ signal: stop.signal })) {
      const data = leader?.dataText === undefined ? undefined : (JSON.parse(leader.dataText) as { address?: string });
      view.line('observer', leader === undefined ? 'sees no leader' : `sees ${leader.ownerName} lead, at address ${data?.address ?? '?'}`);
    }
  })();

  const waitFor = (what: string, matches: (event: CandidateEvent) => boolean, since: number): Promise<CandidateEvent> =>
    workers.waitFor(what, matches, { timeoutMs: STEP_TIMEOUT_MS, since, signal: stop.signal });
  const heartbeatsOf = async (name: string, count: number): Promise<void> => {
    for (let i = 0; i < count; i++)
      await waitFor(`a heartbeat of ${name}`, (e) => e.event === 'heartbeat' && e.name === name, workers.log.length);
  };

  const first = await waitFor('a leader', (e) => e.event === 'leader', 0);
  await heartbeatsOf(first.name, 3);

  // Act 1: the leader dies without a word.
  const lastHeartbeat = [...workers.log].reverse().find((e) => e.event === 'heartbeat' && e.name === first.name);
  const killedAt = process.hrtime.bigint();
  view.line('demo', `✖ SIGKILL ${first.name}, the leader: no release, no more heartbeats`);
  await unlessStopped(workers.kill(first.name));
  board.killed(first.name);
  view.status(board.status());
  const second = await waitFor('a new leader', (e) => e.event === 'leader', workers.log.length);
  const sinceHeartbeat =
    lastHeartbeat === undefined ? '' : `, ${seconds(msBetween(BigInt(lastHeartbeat.t), second.t))} after its last heartbeat`;
  view.line(
    'demo',
    `takeover: ${second.name} leads ${seconds(msBetween(killedAt, second.t))} after the kill${sinceHeartbeat}; the lease is ${seconds(LEASE_MS)}. ` +
      'The waiters saw the same RVN for a whole lease on their own clocks, so the dead leader could no longer act.',
  );
  await heartbeatsOf(second.name, 2);

  // Act 2: a leader that steps down hands over at once.
  const mark = workers.log.length;
  view.line('demo', `asking ${second.name} to resign`);
  workers.send(second.name, 'resign');
  const resigned = await waitFor('the resignation', (e) => e.event === 'resigned' && e.name === second.name, mark);
  const third = await waitFor('the next leader', (e) => e.event === 'leader', mark);
  view.line(
    'demo',
    `hand-over: ${third.name} leads ${seconds(msBetween(BigInt(resigned.t), third.t))} after the resignation: no lease to wait out, just the next read`,
  );
  await heartbeatsOf(third.name, 1);

  view.line('demo', 'stopping the workers (the leader resigns)');
  await unlessStopped(workers.stopAll());
  const terms = leadershipTerms(workers.log);
  const overlaps = overlappingTerms(terms);
  if (overlaps.length > 0)
    throw new Error(`two workers led at once: ${JSON.stringify(overlaps, (_k, v: unknown) => (typeof v === 'bigint' ? String(v) : v))}`);
  view.line(
    'demo',
    `checked: ${terms.length} leadership terms in the workers' logs, never two leaders at the same instant (one monotonic clock for all processes)`,
  );
  stop.abort(new Error('done'));
  await following;
} catch (error) {
  const reason = stop.signal.aborted ? (stop.signal.reason as Error) : (error as Error);
  exitCode = reason.message.startsWith('interrupted') ? 130 : 1;
  view.line('demo', `stopped early: ${reason.message}`);
} finally {
  clearTimeout(deadline);
  if (!stop.signal.aborted) stop.abort(new Error('done'));
  candidates?.dispose();
  await observer?.close().catch(() => undefined);
  dynamoDB?.destroy();
  await local?.stop();
  view.close();
  view.line('demo', 'stopped everything it started (workers, DynamoDB Local); bye');
  process.off('SIGINT', onInterrupt);
}
process.exitCode = exitCode;
