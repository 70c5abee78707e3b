import { checkLoad, type LoadCheckOptions, type SlowReply } from '../../chaos/load-check.js';
import type { LostEvent } from '../../chaos/events.js';
import { accessKeyOf } from '../../chaos/load-keys.js';

const s = (seconds: number): bigint => BigInt(Math.round(seconds * 1e9));

const WORKER = 'w1.1';
const KEY = 'held/1/1';

const options: LoadCheckOptions = {
  leaseMs: 3_000,
  heartbeatMs: 750,
  marginMs: 300,
  endNs: s(100),
  injected: [],
  windows: [],
  // The probe found the server too slow for heartbeats from 10 s to 10.5 s.
  busy: [{ fromNs: s(10), toNs: s(10.5) }],
};

const lostAt = (seconds: number): LostEvent => ({
  type: 'lost',
  worker: WORKER,
  key: KEY,
  acquiredRvn: 'r1',
  atNs: String(s(seconds)),
  kind: 'expired',
});

/** A request naming `key`, passed to the server at `fromSeconds` and answered (or abandoned) `ms` later. */
const slowReply = (fromSeconds: number, ms: number, sender = accessKeyOf(WORKER), key = KEY): SlowReply => ({
  atNs: s(fromSeconds),
  ms,
  answered: false,
  sender,
  keys: [key, 'held/1/2'],
});

const causeOf = (slowReplies: SlowReply[]) => {
  const report = checkLoad([lostAt(12)], { ...options, slowReplies });
  return report.heldLocksLost.unprovoked.total === 1 ? 'unprovoked' : report.heldLocksLost.provoked.byCause;
};

describe('checkLoad: a loss to a server too slow for heartbeats', () => {
  it('is serverBusy when a request of its worker naming its lock waited at the server while the probe found it busy', () => {
    expect(causeOf([slowReply(9.8, 900)])).toMatchObject({ serverBusy: 1 });
  });

  it('is unprovoked when the server was busy within reach but no request of that lock waited at it', () => {
    expect(causeOf([])).toBe('unprovoked');
  });

  it('is unprovoked when the lock’s slow request waited outside the busy windows', () => {
    expect(causeOf([slowReply(11, 700)])).toBe('unprovoked');
  });

  it('is unprovoked when only another worker’s request naming the same key waited at the busy server', () => {
    expect(causeOf([slowReply(9.8, 900, accessKeyOf('w2.1'))])).toBe('unprovoked');
  });

  it('lists the lock’s slow requests with an unprovoked loss', () => {
    const report = checkLoad([lostAt(12)], { ...options, slowReplies: [slowReply(11, 700)] });

    expect(report.heldLocksLost.unprovoked.first[0]?.slowServerReplies).toEqual(['unanswered after 700 ms from -1000']);
  });
});
