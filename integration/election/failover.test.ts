/**
 * Leader election across processes: three candidates, each a process of its
 * own (test-kit/programs/election-candidate.ts). A leader killed with
 * SIGKILL is replaced by exactly one candidate about one lease later; a
 * leader that resigns is replaced at once; and the log of every test shows
 * no two leaders at any instant.
 */
import { afterEach, beforeEach, describe, expect, it } from '@jest/globals';
import { localEndpoint } from '../../test-kit/aws.js';
import { Candidates, type CandidateEvent } from '../../test-kit/election-candidates.js';
import { leadershipTerms, overlappingTerms } from '../../test-kit/leadership-terms.js';
import { LockTestBed, sleep } from '../../test-kit/test-locks.js';

// Three candidate processes start and run on a machine that may be loaded: a leader must ride out a stall of
// about two seconds, and a handover at once must stay far below the lease a takeover would wait out.
const LEASE_MS = 3_000;
const HEARTBEAT_MS = 400;
const REFRESH_MS = 100;
const KEY = 'scheduler-leader';
const NAMES = ['candidate-a', 'candidate-b', 'candidate-c'] as const;
/** Starting three processes with tsx on a busy machine. */
const STARTUP_MS = 30_000;

const ms = (from: string, to: string): number => Number(BigInt(to) - BigInt(from)) / 1e6;
const monotonicNow = (): string => process.hrtime.bigint().toString();

let bed: LockTestBed;
let candidates: Candidates;

beforeEach(async () => {
  bed = new LockTestBed('election-failover');
  await bed.createTable();
  candidates = new Candidates({
    endpoint: localEndpoint(),
    table: bed.tableName,
    key: KEY,
    leaseMs: LEASE_MS,
    heartbeatMs: HEARTBEAT_MS,
    refreshMs: REFRESH_MS,
  });
  for (const name of NAMES) candidates.start(name);
});

afterEach(async () => {
  candidates.dispose();
  await bed.dispose();
});

const isLeader = (event: CandidateEvent): boolean => event.event === 'leader';

/** The candidate of the latest `leader` event. */
function currentLeader(): string {
  const events = candidates.log.filter(isLeader);
  const latest = events[events.length - 1];
  if (latest === undefined) throw new Error('no candidate has led yet');
  return latest.name;
}

/** Stops every candidate, then checks the whole log: terms never overlap. */
async function expectNoTwoLeadersAtOnce(): Promise<void> {
  await candidates.stopAll();
  const errors = candidates.log.filter((event) => event.event === 'error');
  expect(errors).toEqual([]);
  const terms = leadershipTerms(candidates.log);
  expect(terms.length).toBeGreaterThanOrEqual(2);
  expect(overlappingTerms(terms)).toEqual([]);
}

describe('three candidates in separate processes', () => {
  it('replace a leader killed with SIGKILL by exactly one new leader, about one lease later', async () => {
    await candidates.waitFor('a leader', isLeader, { timeoutMs: STARTUP_MS });
    // The leader keeps the lock with heartbeats while the others wait.
    const mark = candidates.log.length;
    await candidates.waitFor('a heartbeat', (e) => e.event === 'heartbeat', { timeoutMs: 10_000, since: mark });
    await candidates.waitFor('another heartbeat', (e) => e.event === 'heartbeat', { timeoutMs: 10_000, since: candidates.log.length });
    await sleep(LEASE_MS);
    // On a busy machine a leader may miss a heartbeat, give up and win again: the leader is the latest one.
    const leader = currentLeader();
    expect(await bed.owner(KEY)).toBe(leader);

    const killedAt = monotonicNow();
    await candidates.kill(leader, 'SIGKILL');
    const afterKill = candidates.log.length;
    const next = await candidates.waitFor('a new leader', isLeader, { timeoutMs: 4 * LEASE_MS, since: afterKill });

    expect(next.name).not.toBe(leader);
    expect(ms(killedAt, next.t)).toBeLessThan(2 * LEASE_MS + 1_000);
    expect(await bed.owner(KEY)).toBe(next.name);

    // Exactly one: the third candidate keeps waiting while the new leader heartbeats.
    await sleep(LEASE_MS);
    expect(
      new Set(
        candidates.log
          .slice(afterKill)
          .filter(isLeader)
          .map((e) => e.name),
      ),
    ).toEqual(new Set([next.name]));
    expect(candidates.log.slice(afterKill).some((e) => e.event === 'heartbeat' && e.name === next.name)).toBe(true);

    await expectNoTwoLeadersAtOnce();
  }, 90_000);

  it('hand over at once when the leader resigns: the next candidate leads at its next read, long before a lease', async () => {
    await candidates.waitFor('a leader', isLeader, { timeoutMs: STARTUP_MS });
    await candidates.waitFor('a heartbeat', (e) => e.event === 'heartbeat', { timeoutMs: 10_000 });
    const leader = currentLeader();

    const mark = candidates.log.length;
    candidates.send(leader, 'resign');
    const resigned = await candidates.waitFor('the resignation', (e) => e.event === 'resigned' && e.name === leader, {
      timeoutMs: 10_000,
      since: mark,
    });
    const next = await candidates.waitFor('a new leader', isLeader, { timeoutMs: 10_000, since: mark });

    expect(next.name).not.toBe(leader);
    // A waiter reads every 100 ms; a takeover without the resignation would need a whole lease (3000 ms).
    expect(ms(resigned.t, next.t)).toBeLessThan(LEASE_MS / 2);

    // The resigned candidate stays out until told to campaign again, then waits behind the new leader.
    candidates.send(leader, 'campaign');
    await candidates.waitFor('the new campaign', (e) => e.event === 'campaigning' && e.name === leader, { timeoutMs: 10_000, since: mark });
    await sleep(LEASE_MS);
    expect(
      new Set(
        candidates.log
          .slice(mark)
          .filter(isLeader)
          .map((e) => e.name),
      ),
    ).toEqual(new Set([next.name]));

    await expectNoTwoLeadersAtOnce();
  }, 90_000);
});
