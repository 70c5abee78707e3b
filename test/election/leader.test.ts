import { describe, expect, it } from '@jest/globals';
import { leaderOf, sameLeader, type Leader } from '../../src/election/leader.js';

const bytes = (text: string): Uint8Array => new TextEncoder().encode(text);
const leader = (ownerName: string, rvn: string, data?: string): Leader => ({
  ownerName,
  recordVersionNumber: rvn,
  leaseDuration: 1_000,
  data: data === undefined ? undefined : bytes(data),
  dataText: data,
});

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

describe('leaderOf', () => {
  it('gives the leader’s data as bytes and as the text it was stored as', () => {
    const seen = leaderOf(leader('a', 'rvn-1', '{"address":"http://10.0.0.7:8080"}'));
    expect(seen.dataText).toBe('{"address":"http://10.0.0.7:8080"}');
    expect(seen.data).toEqual(bytes('{"address":"http://10.0.0.7:8080"}'));
  });
});
