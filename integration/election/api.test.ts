/**
 * The election API against DynamoDB Local, in one process: reading and
 * following the leader, a Java-style holder taking part by the lock's rules,
 * campaigning again after a loss, and the refusals.
 */
import { describe, expect, it } from '@jest/globals';
import {
  AlreadyCampaigningError,
  LeaderElection,
  LockLostError,
  isAlreadyCampaigningError,
  type Leader,
  type Leadership,
  type LockClient,
} from '../../src/index.js';
import { rejectionOf, sleep, text, waitUntil, watch } from '../../test-kit/test-locks.js';
import { useLockTestBed } from '../../test-kit/jest/lock-test-bed-hook.js';
import { markReleased, putForeignLock } from '../../test-kit/tamper.js';
import { abortOf, within } from '../../test-kit/jest/lock-events.js';
import { LIVE_LEASE_MS } from '../../test-kit/live-lease.js';

const LEASE = 1_000;
const HEARTBEAT = 250;
const REFRESH = 100;
const KEY = 'election';
/** The lease a Java-style holder writes on its item; waiters go by it, not by their own client's lease. */
const JAVA_LEASE = 2_000;

const bed = useLockTestBed('election-api');

const candidate = (name: string): LockClient => bed.client({ ownerName: name, leaseDuration: LIVE_LEASE_MS, heartbeatPeriod: HEARTBEAT });
const electionOf = (client: LockClient, address: string): LeaderElection =>
  new LeaderElection(client, KEY, { data: JSON.stringify({ address }), refreshPeriod: REFRESH, pollInterval: 50 });
const addressOf = (leader: Leader | undefined): string | undefined =>
  leader?.data === undefined ? undefined : (JSON.parse(text(leader.data) as string) as { address: string }).address;

/** Writes the item a Java `AmazonDynamoDBLockClient` writes when it acquires (no sort key). */
const putJavaStyleLock = (ownerName: string, leaseMs: number, data?: string): Promise<string> =>
  putForeignLock(bed, KEY, ownerName, { leaseMs, data });

describe('observing an election', () => {
  it('leader() says who leads and with what data; observe() yields each change of leader, not heartbeats', async () => {
    const observer = electionOf(candidate('observer'), 'unused');
    expect(await observer.leader()).toBeUndefined();

    const stop = new AbortController();
    const seen: Array<Leader | undefined> = [];
    const following = (async () => {
      for await (const leader of observer.observe({ signal: stop.signal })) seen.push(leader);
    })();
    await waitUntil('the observer saw that nobody leads', () => seen.length === 1);

    const a = await electionOf(candidate('alpha'), '10.0.0.1:8080').campaign();
    const b = watch(electionOf(candidate('bravo'), '10.0.0.2:8080').campaign());
    await waitUntil('the observer saw alpha', () => seen.length === 2);
    expect((await observer.leader())?.ownerName).toBe('alpha');
    expect(addressOf(await observer.leader())).toBe('10.0.0.1:8080');

    await sleep(3 * HEARTBEAT); // heartbeats change the RVN, not the leader
    expect(seen).toHaveLength(2);

    expect(await a.resign()).toBe(true);
    expect(a.signal.aborted).toBe(true);
    const bravo = await b.promise;
    expect(bravo.isLeader).toBe(true);
    await waitUntil('the observer saw bravo', () => seen[seen.length - 1]?.ownerName === 'bravo');
    stop.abort();
    await following;

    // Between alpha's resignation and bravo's first write, a read may find nobody leading.
    const owners = seen.map((leader) => leader?.ownerName);
    expect([
      [undefined, 'alpha', 'bravo'],
      [undefined, 'alpha', undefined, 'bravo'],
    ]).toContainEqual(owners);
    expect(seen.filter((leader) => leader !== undefined).map(addressOf)).toEqual(['10.0.0.1:8080', '10.0.0.2:8080']);
  });
});

describe('observe() options', () => {
  it('takes pollInterval per call, as watchLock does, over the election’s default', async () => {
    // The election's own default would not read again within the test.
    const observer = new LeaderElection(candidate('slow-observer'), 'poll-interval', { pollInterval: 600_000 });
    const stop = new AbortController();
    const seen: Array<string | undefined> = [];
    const following = (async () => {
      for await (const leader of observer.observe({ pollInterval: 50, signal: stop.signal })) seen.push(leader?.ownerName);
    })();
    try {
      await waitUntil('the observer saw that nobody leads', () => seen.length === 1);
      const leadership = await new LeaderElection(candidate('charlie'), 'poll-interval').campaign();
      await waitUntil('the observer saw charlie within a few polls', () => seen.length === 2, { timeoutMs: 5_000 });
      expect(seen).toEqual([undefined, 'charlie']);
      await leadership.resign();
    } finally {
      stop.abort();
      await following;
    }
  });
});

describe('a Java client contending on the same key', () => {
  it('is observed as the leader, waited for while it heartbeats, and taken over once its RVN stood still for its lease', async () => {
    await putJavaStyleLock('java-host-7f3a', JAVA_LEASE, JSON.stringify({ address: '10.0.0.9:9090' }));
    const election = electionOf(candidate('node-candidate'), '10.0.0.3:8080');
    const leader = await election.leader();
    expect(leader?.ownerName).toBe('java-host-7f3a');
    expect(leader?.leaseDuration).toBe(JAVA_LEASE);
    expect(addressOf(leader)).toBe('10.0.0.9:9090');

    const campaign = watch(election.campaign());
    // The Java holder heartbeats (a new RVN each time) for one and a half of its leases: the candidate keeps waiting.
    for (let i = 0; i < 12; i++) {
      await sleep(HEARTBEAT);
      await putJavaStyleLock('java-host-7f3a', JAVA_LEASE, JSON.stringify({ address: '10.0.0.9:9090' }));
    }
    expect(campaign.settled()).toBe(false);
    expect((await election.leader())?.ownerName).toBe('java-host-7f3a');

    // The Java holder stops heartbeating: one lease later the candidate leads.
    const leadership = await campaign.promise;
    expect(leadership.isLeader).toBe(true);
    expect(await bed.owner(KEY)).toBe('node-candidate');
    expect(addressOf(await election.leader())).toBe('10.0.0.3:8080');
    await leadership.resign();
    expect(await bed.item(KEY)).toBeUndefined();
  });
});

describe('lead()', () => {
  it('aborts the routine when leadership is lost, campaigns again, and resigns once the routine ends while leading', async () => {
    const election = electionOf(candidate('worker'), '10.0.0.4:8080');
    const lossReasons: unknown[] = [];
    let terms = 0;
    const leading = watch(
      election.lead(async (signal, leadership) => {
        terms++;
        if (terms === 1) {
          // A Java client takes the lock over (as after a long pause of ours): our next heartbeat is refused.
          await putJavaStyleLock('java-usurper', LEASE);
          await new Promise((resolve) => signal.addEventListener('abort', resolve, { once: true }));
          lossReasons.push(signal.reason);
          return 'lost';
        }
        leadership.throwIfLost();
        return 'done';
      }),
    );

    const result = await leading.promise;
    expect(result).toBe('done');
    expect(terms).toBe(2);
    expect(lossReasons[0]).toBeInstanceOf(LockLostError);
    expect((lossReasons[0] as LockLostError).kind).toBe('taken');
    expect(await bed.item(KEY)).toBeUndefined(); // resigned after the second term
  });

  it('with recampaign: false, ends with the routine after a loss', async () => {
    const election = electionOf(candidate('one-shot'), '10.0.0.5:8080');
    let terms = 0;
    const result = await election.lead(
      async (signal) => {
        terms++;
        await putJavaStyleLock('java-usurper', LEASE);
        await new Promise((resolve) => signal.addEventListener('abort', resolve, { once: true }));
        return 'stopped';
      },
      { recampaign: false },
    );
    expect(result).toBe('stopped');
    expect(terms).toBe(1);
    expect(await bed.owner(KEY)).toBe('java-usurper');
  });
  it('campaigns again when someone else marked the item released: that is a loss, not a resignation', async () => {
    const election = electionOf(candidate('marked'), '10.0.0.7:8080');
    const lossReasons: unknown[] = [];
    let terms = 0;
    const leading = election.lead(async (signal) => {
      terms++;
      if (terms > 1) return 'second term';
      await markReleased(bed, KEY); // as an operator tool, or a client that took the lock and kept its item, does
      await new Promise((resolve) => signal.addEventListener('abort', resolve, { once: true }));
      lossReasons.push(signal.reason);
      return 'first term';
    });

    expect(await within(leading, 10 * LEASE, 'lead() ending after a second term')).toBe('second term');
    expect(terms).toBe(2);
    expect((lossReasons[0] as LockLostError).kind).toBe('released');
  });

  it('ends with the routine when the routine resigned: a resignation is not a loss, so no new term', async () => {
    const election = electionOf(candidate('resigner'), '10.0.0.6:8080');
    let terms = 0;
    const leading = election.lead(async (signal, leadership) => {
      terms++;
      // Ends the term as a routine that has done its share does; a second term would mean a campaign after it.
      if (terms > 1) return 'a second term';
      expect(await leadership.resign()).toBe(true);
      expect((signal.reason as LockLostError).kind).toBe('released');
      return 'resigned';
    });

    expect(await within(leading, 10 * LEASE, 'lead() ending after the routine resigned')).toBe('resigned');
    expect(terms).toBe(1);
    expect(await bed.item(KEY)).toBeUndefined();
  });
});

describe('campaign()', () => {
  it('refuses a second campaign of the same candidate, while campaigning and while leading', async () => {
    const client = candidate('eager');
    const election = electionOf(client, '10.0.0.6:8080');
    const first = election.campaign();
    const whileCampaigning = await rejectionOf(election.campaign());
    expect(whileCampaigning).toBeInstanceOf(AlreadyCampaigningError);
    const leadership = await first;
    expect(isAlreadyCampaigningError(await rejectionOf(election.campaign()))).toBe(true);
    // Another election object on the same client and key: its client already holds the lock.
    const twin = await rejectionOf(electionOf(client, 'other').campaign());
    expect(twin).toBeInstanceOf(AlreadyCampaigningError);
    expect((twin as Error).message).toContain('already holds');

    await leadership.resign();
    const again = await election.campaign();
    expect(again.isLeader).toBe(true);
    await again.resign();
  });

  it('stops waiting when its signal aborts, and leaves the leader alone', async () => {
    const leader = await electionOf(candidate('incumbent'), '10.0.0.7:8080').campaign();
    const stop = new AbortController();
    const campaign = watch(electionOf(candidate('challenger'), '10.0.0.8:8080').campaign({ signal: stop.signal }));
    await sleep(2 * REFRESH);
    stop.abort(new Error('shutting down'));
    expect(((await rejectionOf(campaign.promise)) as Error).message).toBe('shutting down');
    expect(leader.isLeader).toBe(true);
    expect(await bed.owner(KEY)).toBe('incumbent');
    await leader.resign();
  });
});

describe('`await using` on a leadership whose lease ran out locally', () => {
  /** A candidate whose leadership lapses a lease after it won: no heartbeats. */
  const lapsing = async (name: string): Promise<Leadership> => {
    const client = bed.client({ ownerName: name, leaseDuration: LEASE, heartbeatPeriod: HEARTBEAT, backgroundHeartbeats: false });
    const leadership = await electionOf(client, '10.0.0.5:8080').campaign();
    expect((await abortOf(leadership.signal, 5_000)).reason).toMatchObject({ kind: 'expired' });
    return leadership;
  };

  it("resigns, as a Lock's dispose releases: the item, still this candidate's, is deleted", async () => {
    const leadership = await lapsing('lapsed');
    expect(await bed.owner(KEY)).toBe('lapsed');

    await leadership[Symbol.asyncDispose]();

    expect(await bed.item(KEY)).toBeUndefined(); // so no candidate has a lease to wait out
    const next = await electionOf(candidate('next'), '10.0.0.6:8080').campaign();
    expect(next.isLeader).toBe(true);
    await next.resign();
  });

  it('leaves the candidate that took over alone: the resignation is conditional on the RVN it last wrote', async () => {
    const leadership = await lapsing('lapsed');
    const taker = await electionOf(candidate('taker'), '10.0.0.6:8080').campaign();

    await leadership[Symbol.asyncDispose]();

    expect(taker.isLeader).toBe(true);
    expect(await bed.owner(KEY)).toBe('taker');
    await taker.resign();
  });
});
