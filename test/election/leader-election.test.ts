/**
 * The election's pure parts and its checks of bad input, without DynamoDB:
 * what counts as a change of leader, the polling watch over a scripted
 * client, the constructor's refusals, and the leadership-term checker the
 * election tests and the demo rely on.
 */
import { describe, expect, it } from '@jest/globals';
import { DynamoDBLockError, InvalidArgumentError, LeaderElection, LockClient, LockTableDoesNotExistError, watchLock } from '../../src/index.js';
import { AlreadyCampaigningError, isAlreadyCampaigningError } from '../../src/election/already-campaigning-error.js';
import { sameLeader, type Leader } from '../../src/election/leader.js';
import type { CandidateEvent } from '../../test-kit/election-candidates.js';
import { leadershipTerms, overlappingTerms } from '../../test-kit/leadership-terms.js';

const bytes = (text: string): Uint8Array => new TextEncoder().encode(text);
const leader = (ownerName: string, rvn: string, data?: string): Leader => ({
  ownerName,
  recordVersionNumber: rvn,
  leaseDuration: 1_000,
  data: data === undefined ? undefined : bytes(data),
});

/** A lock client whose DynamoDB never answers: enough for everything checked before a call. */
const silentClient = (): LockClient =>
  new LockClient({ dynamoDB: { send: () => new Promise(() => undefined) }, tableName: 'locks', ownerName: 'unit' });

describe('sameLeader', () => {
  it('ignores heartbeats (a new RVN) but not a new owner or new data', () => {
    expect(sameLeader(leader('a', 'rvn-1', 'x'), leader('a', 'rvn-2', 'x'))).toBe(true);
    expect(sameLeader(leader('a', 'rvn-1', 'x'), leader('b', 'rvn-1', 'x'))).toBe(false);
    expect(sameLeader(leader('a', 'rvn-1', 'x'), leader('a', 'rvn-1', 'y'))).toBe(false);
    expect(sameLeader(leader('a', 'rvn-1', 'x'), leader('a', 'rvn-1'))).toBe(false);
    expect(sameLeader(undefined, undefined)).toBe(true);
    expect(sameLeader(undefined, leader('a', 'rvn-1'))).toBe(false);
  });
});

describe('LeaderElection refuses bad input before any call', () => {
  it.each([
    ['an empty key', () => new LeaderElection(silentClient(), ''), 'EMPTY_KEY'],
    ['a negative refreshPeriod', () => new LeaderElection(silentClient(), 'k', { refreshPeriod: -1 }), 'INVALID_DURATION'],
    ['a fractional pollInterval', () => new LeaderElection(silentClient(), 'k', { pollInterval: 1.5 }), 'INVALID_DURATION'],
    ['a zero leaseDuration', () => new LeaderElection(silentClient(), 'k', { leaseDuration: 0 }), 'INVALID_DURATION'],
    ['data that is neither bytes nor text', () => new LeaderElection(silentClient(), 'k', { data: 42 as never }), 'INVALID_OPTION'],
    ['something that is not a LockClient', () => new LeaderElection({} as never, 'k'), 'INVALID_OPTION'],
  ])('%s', (_what, build, code) => {
    expect(build).toThrow(InvalidArgumentError);
    try {
      build();
    } catch (error) {
      expect((error as InvalidArgumentError).code).toBe(code);
    }
  });

  it('a lease too short for the client’s heartbeat period fails at campaign, before any call', async () => {
    const election = new LeaderElection(silentClient(), 'k', { leaseDuration: 100 });
    await expect(election.campaign()).rejects.toMatchObject({ code: 'LEASE_TOO_SHORT' });
  });
});

describe('AlreadyCampaigningError', () => {
  it('is a DynamoDBLockError naming the key, with a guard that goes by name', () => {
    const error = new AlreadyCampaigningError({ partitionKey: 'leader', sortKey: 'eu' }, 'it already leads');
    expect(error).toBeInstanceOf(DynamoDBLockError);
    expect(error.message).toBe('Cannot campaign in the election on "leader"/"eu": it already leads; resign or abort the campaign first');
    expect(isAlreadyCampaigningError(error)).toBe(true);
    expect(isAlreadyCampaigningError(new Error('AlreadyCampaigningError'))).toBe(false);
  });
});

type Answer = { owner: string; rvn: string; data?: string } | undefined | Error;

/** A real LockClient whose DynamoDB plays back one answer per GetItem call. */
function scripted(answers: readonly Answer[]): { client: LockClient; calls: () => number } {
  let call = 0;
  const send = async (): Promise<unknown> => {
    const answer = answers[Math.min(call++, answers.length - 1)];
    if (answer instanceof Error) throw answer;
    if (answer === undefined) return {};
    return {
      Item: {
        key: { S: 'k' },
        ownerName: { S: answer.owner },
        leaseDuration: { S: '1000' },
        recordVersionNumber: { S: answer.rvn },
        ...(answer.data === undefined ? {} : { data: { B: bytes(answer.data) } }),
      },
    };
  };
  const client = new LockClient({ dynamoDB: { send }, tableName: 'locks', ownerName: 'observer' });
  return { client, calls: () => call };
}

const serviceError = (name: string, status: number): Error => Object.assign(new Error(name), { name, $metadata: { httpStatusCode: status } });

describe('watchLock', () => {
  it('yields the first read, then only reads that differ in holder or RVN; retries throttling', async () => {
    const { client } = scripted([
      undefined,
      undefined,
      { owner: 'a', rvn: '1' },
      { owner: 'a', rvn: '1' },
      serviceError('ThrottlingException', 400),
      { owner: 'a', rvn: '2' },
      { owner: 'b', rvn: '3' },
      undefined,
    ]);
    const stop = new AbortController();
    const seen: Array<string | undefined> = [];
    for await (const lock of watchLock(client, 'k', { pollInterval: 1, signal: stop.signal })) {
      seen.push(lock === undefined ? undefined : `${lock.ownerName}@${lock.recordVersionNumber}`);
      if (seen.length === 5) stop.abort();
    }
    expect(seen).toEqual([undefined, 'a@1', 'a@2', 'b@3', undefined]);
  });

  it('ends by throwing on an error that is not transient', async () => {
    const { client } = scripted([{ owner: 'a', rvn: '1' }, serviceError('ResourceNotFoundException', 400)]);
    const seen: unknown[] = [];
    const watching = (async () => {
      for await (const lock of watchLock(client, 'k', { pollInterval: 1 })) seen.push(lock);
    })();
    await expect(watching).rejects.toBeInstanceOf(LockTableDoesNotExistError);
    expect(seen).toHaveLength(1);
  });

  it('ends without reading when its signal has aborted, and refuses a bad pollInterval at the call', async () => {
    const { client, calls } = scripted([{ owner: 'a', rvn: '1' }]);
    const stop = new AbortController();
    stop.abort();
    for await (const _ of watchLock(client, 'k', { signal: stop.signal })) throw new Error('nothing should be yielded');
    expect(calls()).toBe(0);
    expect(() => watchLock(client, 'k', { pollInterval: 0 })).toThrow(InvalidArgumentError);
  });
});

describe('LeaderElection.observe', () => {
  it('yields a change of leader or of its data, never a heartbeat', async () => {
    const { client } = scripted([
      undefined,
      { owner: 'a', rvn: '1', data: 'x' },
      { owner: 'a', rvn: '2', data: 'x' },
      { owner: 'a', rvn: '3', data: 'y' },
      { owner: 'b', rvn: '4', data: 'y' },
    ]);
    const election = new LeaderElection(client, 'k', { pollInterval: 1 });
    const stop = new AbortController();
    const seen: Array<string | undefined> = [];
    for await (const current of election.observe({ signal: stop.signal })) {
      seen.push(current === undefined ? undefined : `${current.ownerName}:${new TextDecoder().decode(current.data)}`);
      if (seen.length === 4) stop.abort();
    }
    expect(seen).toEqual([undefined, 'a:x', 'a:y', 'b:y']);
  });
});

describe('leadership terms from the candidates’ log', () => {
  let t = 0n;
  const event = (name: string, kind: CandidateEvent['event'], at: bigint): CandidateEvent => {
    t = at;
    return { event: kind, name, pid: 1, t: String(t) };
  };

  it('runs each term from `leader` to the last `leading` before it ended', () => {
    const log = [
      event('a', 'leader', 100n),
      event('a', 'leading', 150n),
      event('a', 'leading', 200n),
      event('a', 'lost', 260n),
      event('b', 'leader', 300n),
      event('b', 'resigned', 310n),
      event('c', 'leader', 400n),
      event('c', 'leading', 450n),
    ];
    expect(leadershipTerms(log)).toEqual([
      { name: 'a', from: 100n, to: 200n },
      { name: 'b', from: 300n, to: 300n },
      { name: 'c', from: 400n, to: 450n },
    ]);
    expect(overlappingTerms(leadershipTerms(log))).toEqual([]);
  });

  it('finds two candidates that led at the same instant, whatever order their lines arrived in', () => {
    const log = [
      event('b', 'leader', 180n),
      event('a', 'leader', 100n),
      event('a', 'leading', 200n),
      event('b', 'leading', 250n),
      event('c', 'leader', 300n),
    ];
    const overlaps = overlappingTerms(leadershipTerms(log));
    expect(overlaps.map(([x, y]) => [x.name, y.name])).toEqual([['a', 'b']]);
  });
});
