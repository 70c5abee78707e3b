import { checkLoad, type LoadCheckOptions } from '../../chaos/load-check.js';
import type { LostEvent } from '../../chaos/events.js';

const s = (seconds: number): bigint => BigInt(seconds * 1e9);

const options: LoadCheckOptions = {
  leaseMs: 3_000,
  heartbeatMs: 750,
  marginMs: 300,
  endNs: s(100),
  injected: [],
  windows: [],
  busy: [],
};

const lost = (atSeconds: number): LostEvent => ({
  type: 'lost',
  worker: 'w1.1',
  key: 'held/1/1',
  acquiredRvn: 'r1',
  atNs: String(s(atSeconds)),
  kind: 'expired',
});

describe('checkLoad and the server probe', () => {
  it('counts a loss within a lease and the margin after a busy window as serverBusy, and one later as unprovoked', () => {
    const report = checkLoad([lost(12), lost(20)], { ...options, busy: [{ fromNs: s(10), toNs: s(10.5) }] });

    expect(report.heldLocksLost.provoked.byCause.serverBusy).toBe(1);
    expect(report.heldLocksLost.unprovoked.total).toBe(1);
    expect(report.heldLocksLost.unprovoked.first.map((loss) => loss.atNs)).toEqual([String(s(20))]);
  });

  it('reports how much of the run lay within reach of a busy window, overlapping reaches counted once', () => {
    const report = checkLoad([], {
      ...options,
      // Out of order; 10–13.8 s and 12–15.3 s overlap (10–15.3 s); the last reaches past the end (98.5–100 s).
      busy: [
        { fromNs: s(12), toNs: s(12) },
        { fromNs: s(10), toNs: s(10.5) },
        { fromNs: s(98.5), toNs: s(99) },
      ],
    });

    expect(report.serverBusyReachMs).toBe(5_300 + 1_500);
  });

  it('reports no reach when the server was never found busy', () => {
    expect(checkLoad([lost(12)], options).serverBusyReachMs).toBe(0);
  });
});
