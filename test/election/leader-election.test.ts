/**
 * LeaderElection without DynamoDB: the constructor's refusals of bad input,
 * and what `observe` yields over a scripted client.
 */
import { describe, expect, it } from '@jest/globals';
import { InvalidArgumentError, LeaderElection, LockClient } from '../../src/index.js';
import { scripted } from './scripted-client.js';

/** A lock client whose DynamoDB never answers: enough for everything checked before a call. */
const silentClient = (): LockClient =>
  new LockClient({ dynamoDB: { send: () => new Promise(() => undefined) }, tableName: 'locks', ownerName: 'unit' });

describe('LeaderElection refuses bad input before any call', () => {
  it.each([
    ['an empty key', () => new LeaderElection(silentClient(), ''), 'EMPTY_KEY'],
    ['a negative refreshPeriod', () => new LeaderElection(silentClient(), 'k', { refreshPeriod: -1 }), 'INVALID_DURATION'],
    ['a refreshPeriod under 10 ms', () => new LeaderElection(silentClient(), 'k', { refreshPeriod: 9 }), 'INVALID_DURATION'],
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
