/**
 * Leadership terms from the candidates' log, and the check that no two of
 * them overlap: at no instant did two candidates believe they led.
 *
 * A term runs from a candidate's `leader` event to its last `leading` event
 * before it lost, resigned, stopped or was killed: the last instant at which
 * `throwIfLost()` still passed. All times are the machine's monotonic clock.
 */
import type { CandidateEvent } from './election-candidates.js';

export interface LeadershipTerm {
  readonly name: string;
  /** Nanoseconds: when the campaign resolved. */
  readonly from: bigint;
  /** Nanoseconds: the last check that still passed (equals `from` if none came). */
  readonly to: bigint;
}

export function leadershipTerms(log: readonly CandidateEvent[]): LeadershipTerm[] {
  const terms: LeadershipTerm[] = [];
  const open = new Map<string, { from: bigint; to: bigint }>();
  const close = (name: string): void => {
    const term = open.get(name);
    if (term !== undefined) terms.push({ name, ...term });
    open.delete(name);
  };
  for (const event of log) {
    const t = BigInt(event.t);
    if (event.event === 'leader') {
      close(event.name);
      open.set(event.name, { from: t, to: t });
    } else if (event.event === 'leading') {
      const term = open.get(event.name);
      if (term !== undefined && t > term.to) term.to = t;
    } else if (event.event === 'lost' || event.event === 'resigned' || event.event === 'stopped') {
      close(event.name);
    }
  }
  for (const name of [...open.keys()]) close(name);
  return terms.sort((a, b) => (a.from < b.from ? -1 : a.from > b.from ? 1 : 0));
}

/** Pairs of terms of different candidates that share an instant. */
export function overlappingTerms(terms: readonly LeadershipTerm[]): Array<readonly [LeadershipTerm, LeadershipTerm]> {
  const sorted = [...terms].sort((a, b) => (a.from < b.from ? -1 : a.from > b.from ? 1 : 0));
  const overlaps: Array<readonly [LeadershipTerm, LeadershipTerm]> = [];
  for (let i = 0; i < sorted.length; i++) {
    for (let j = i + 1; j < sorted.length; j++) {
      const a = sorted[i] as LeadershipTerm;
      const b = sorted[j] as LeadershipTerm;
      if (b.from > a.to) break; // sorted by start: no later term can reach back into a
      overlaps.push([a, b]);
    }
  }
  return overlaps;
}
