import { describe, expect, it } from '@jest/globals';
import { StaleWatch } from '../../src/acquire/stale-watch.js';
import type { LockObservation } from '../../src/dynamodb/read-lock.js';
import { permitKeys } from '../../src/semaphore/permit-keys.js';
import { judgeRound, type RoundReading } from '../../src/semaphore/permit-round.js';
import { SemaphorePermitsMismatchError } from '../../src/semaphore/permits-mismatch-error.js';

const PERMITS = 3;
const keys = permitKeys('s', PERMITS + 1, undefined);

function held(
  index: number,
  rvn: string,
  observedAt: number,
  extra: { permits?: unknown; released?: boolean; leaseMs?: number } = {},
): LockObservation {
  return {
    observedAt,
    record: {
      ...(keys[index] as { partitionKey: string }),
      ownerName: `owner-${index}`,
      leaseDurationMs: extra.leaseMs ?? 1_000,
      recordVersionNumber: rvn,
      isReleased: extra.released ?? false,
      data: undefined,
      additionalAttributes: 'permits' in extra ? { semaphorePermits: extra.permits } : { semaphorePermits: PERMITS },
    },
  };
}

function reading(seen: RoundReading['seen'], now: number, watches = keys.slice(0, PERMITS).map(() => new StaleWatch())): RoundReading {
  return { permits: PERMITS, keys, seen, watches, heldHere: () => false, now };
}

describe('judgeRound', () => {
  it('counts absent and released permits free, and held ones taken until their RVN stands still for the lease', () => {
    const watches = keys.slice(0, PERMITS).map(() => new StaleWatch());
    const first = judgeRound(reading([undefined, held(1, 'a', 0, { released: true }), held(2, 'b', 0, { leaseMs: 2_000 })], 0, watches));
    expect(first).toMatchObject({ free: [0, 1], stale: [], longestLease: 2_000, nextStaleAt: 2_001 });
    expect(first.holder?.ownerName).toBe('owner-2');
    // The same RVN later: its timer runs from the first response that showed it.
    const later = judgeRound(reading([undefined, undefined, held(2, 'b', 1_500, { leaseMs: 2_000 })], 2_001, watches));
    expect(later.stale.map(({ index, observation }) => [index, observation.observedAt])).toEqual([[2, 0]]);
  });

  it('restarts a permit’s timer when its holder heartbeats, and forgets it once the permit is free', () => {
    const watches = keys.slice(0, PERMITS).map(() => new StaleWatch());
    judgeRound(reading([held(0, 'a', 0), undefined, undefined], 0, watches));
    const beat = judgeRound(reading([held(0, 'a2', 900), undefined, undefined], 1_500, watches));
    expect(beat.stale).toEqual([]);
    expect(beat.nextStaleAt).toBe(1_901);
    judgeRound(reading([undefined, undefined, undefined], 1_600, watches));
    expect(watches[0]?.observation).toBeUndefined();
  });

  it('counts a permit this client holds as taken, never free nor stale', () => {
    const watches = keys.slice(0, PERMITS).map(() => new StaleWatch());
    const mine = { ...reading([held(0, 'a', 0), undefined, undefined], 0, watches), heldHere: (index: number) => index <= 1 };
    judgeRound(mine);
    expect(judgeRound({ ...mine, now: 5_000 })).toMatchObject({ free: [2], stale: [] });
  });

  it('counts a permit without the attribute (a Java joiner) as taken', () => {
    expect(judgeRound(reading([held(0, 'j', 0, { permits: undefined }), undefined, undefined], 0)).free).toEqual([1, 2]);
  });

  it('refuses a held permit that carries another N, and the permit past the last held', () => {
    const other = rejection(() => judgeRound(reading([undefined, held(1, 'a', 0, { permits: 5 }), undefined], 0)));
    expect(other).toMatchObject({ permits: 3, permitsOnItem: 5, permit: { partitionKey: 's#permit-2' } });
    const past = rejection(() => judgeRound(reading([undefined, undefined, undefined, held(3, 'x', 0, { permits: undefined })], 0)));
    expect(past).toMatchObject({ permits: 3, permitsOnItem: undefined, permit: { partitionKey: 's#permit-4' } });
    expect(String(past)).toMatch(/past the last/);
    const unreadable = rejection(() => judgeRound(reading([held(0, 'a', 0, { permits: 'three' }), undefined, undefined], 0)));
    expect(String(unreadable)).toMatch(/an unreadable number of permits/);
  });

  it('lets released permits of another N, and a released permit past the last, be', () => {
    const seen = [held(0, 'a', 0, { permits: 5, released: true }), undefined, undefined, held(3, 'x', 0, { released: true })];
    expect(judgeRound(reading(seen, 0)).free).toEqual([0, 1, 2]);
  });
});

function rejection(run: () => unknown): SemaphorePermitsMismatchError {
  try {
    run();
  } catch (error) {
    expect(error).toBeInstanceOf(SemaphorePermitsMismatchError);
    return error as SemaphorePermitsMismatchError;
  }
  throw new Error('expected SemaphorePermitsMismatchError');
}
