import { describe, expect, it } from '@jest/globals';
import type { CandidateEvent } from '../../test-kit/election-candidates.js';
import { leadershipTerms, overlappingTerms } from '../../test-kit/leadership-terms.js';

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
