/**
 * The load mode of the chaos run (`npm run chaos -- --load`): its verdict on
 * held locks lost and acquisitions overdue is shown to tell provoked losses
 * from the others, its fault schedule to know who sent a faulted request and
 * which keys it named, and a short load run to report in the shape the long
 * runs are read in. The long runs themselves are not part of the suite.
 */
import { describe, expect, it } from '@jest/globals';
import { DynamoDBClient, GetItemCommand } from '@aws-sdk/client-dynamodb';
import { FaultProxy, type ProxiedRequest } from '../test-kit/fault-proxy.js';
import { localEndpoint } from '../test-kit/aws.js';
import type { ChaosEvent } from '../chaos/events.js';
import { checkLoad, PROXY_STALLS, type LoadCheckOptions } from '../chaos/load-check.js';
import { accessKeyOf, keysOf, namesOnlyHotKeys, senderOf } from '../chaos/load-keys.js';
import { DEFAULT_CHAOS, runChaos } from '../chaos/runner.js';
import { LOAD_DEFAULTS } from '../chaos/load-run.js';

const s = (seconds: number): string => String(BigInt(Math.round(seconds * 1e9)));
const ns = (seconds: number): bigint => BigInt(s(seconds));
const OPTIONS: LoadCheckOptions = { leaseMs: 1_000, heartbeatMs: 250, marginMs: 500, endNs: ns(100), injected: [], windows: [], busy: [] };
const lost = (worker: string, key: string, at: number, kind = 'expired'): ChaosEvent => ({
  type: 'lost',
  worker,
  key,
  acquiredRvn: `${worker}-${key}`,
  atNs: s(at),
  kind,
});

describe("the load run's verdict on held locks lost", () => {
  it('counts a loss with nothing injected near it as outside the faults', () => {
    const report = checkLoad([lost('w1.1', 'held/1/0', 10)], OPTIONS);
    expect(report.heldLocksLost).toMatchObject({
      total: 1,
      byKind: { expired: 1 },
      provoked: { total: 0 },
      unprovoked: { total: 1, byKind: { expired: 1 } },
    });
  });

  it("sorts losses by what provoked them within the lease and margin before: a pause, a saturation, the lock's own request waiting at a server the probe found slow, a stall, a fault on the lock's own request", () => {
    const events: ChaosEvent[] = [
      { type: 'stop', worker: 'w1.1', atNs: s(9) },
      { type: 'cont', worker: 'w1.1', atNs: s(9.6) },
      lost('w1.1', 'held/1/0', 10),
      lost('w2.1', 'held/2/0', 20, 'taken'),
      { type: 'stall', worker: 'w3.1', fromNs: s(29), toNs: s(29.3) },
      lost('w3.1', 'held/3/0', 30),
      lost('w1.1', 'held/1/1', 40),
      lost('w2.1', 'held/2/1', 50),
    ];
    const report = checkLoad(events, {
      ...OPTIONS,
      windows: [{ fromNs: ns(18), toNs: ns(19) }],
      busy: [{ fromNs: ns(48.8), toNs: ns(49.1) }],
      slowReplies: [{ atNs: ns(48.7), sender: accessKeyOf('w2.1'), keys: ['held/2/1'], ms: 600, answered: false }],
      injected: [{ atNs: ns(39.2), sender: accessKeyOf('w1.1'), keys: ['held/1/1', 'held/1/2'] }],
    });
    expect(report.heldLocksLost.provoked).toEqual({
      total: 5,
      byKind: { expired: 4, taken: 1 },
      byCause: { paused: 1, saturated: 1, serverBusy: 1, stalled: 1, requestFaulted: 1 },
    });
    expect(report.heldLocksLost.unprovoked.total).toBe(0);
  });

  it("does not excuse a loss by faults on other workers' requests, on other keys, or long before, nor by a short stall", () => {
    const events: ChaosEvent[] = [
      { type: 'stop', worker: 'w1.1', atNs: s(1) },
      { type: 'cont', worker: 'w1.1', atNs: s(2) },
      { type: 'stall', worker: 'w1.1', fromNs: s(9.5), toNs: s(9.7) },
      lost('w1.1', 'held/1/0', 10),
    ];
    const report = checkLoad(events, {
      ...OPTIONS,
      windows: [{ fromNs: ns(3), toNs: ns(8) }],
      busy: [{ fromNs: ns(2), toNs: ns(8.4) }],
      injected: [
        { atNs: ns(9.5), sender: accessKeyOf('w2.1'), keys: ['held/1/0'] },
        { atNs: ns(9.5), sender: accessKeyOf('w1.1'), keys: ['hot/0'] },
        { atNs: ns(7), sender: accessKeyOf('w1.1'), keys: ['held/1/0'] },
      ],
    });
    expect(report.heldLocksLost.unprovoked).toMatchObject({ total: 1, first: [{ worker: 'w1.1', key: 'held/1/0' }] });
  });

  it("lists with a loss outside the faults the server's slow replies to that worker's requests naming that lock, and those still unanswered when the client gave up", () => {
    const slow = (at: number, worker: string, key: string, ms: number, answered = true) => ({
      atNs: ns(at),
      sender: accessKeyOf(worker),
      keys: [key, 'held/1/9'],
      ms,
      answered,
    });
    const report = checkLoad([lost('w1.1', 'held/1/0', 10)], {
      ...OPTIONS,
      slowReplies: [
        slow(9, 'w1.1', 'held/1/0', 700),
        slow(9.2, 'w1.1', 'held/1/0', 750, false),
        slow(9, 'w2.1', 'held/1/0', 800),
        slow(9.5, 'w1.1', 'held/1/1', 900),
        slow(2, 'w1.1', 'held/1/0', 600),
      ],
    });
    expect(report.heldLocksLost.unprovoked.first).toEqual([
      expect.objectContaining({ key: 'held/1/0', slowServerReplies: ['700 ms from -1000', 'unanswered after 750 ms from -800'] }),
    ]);
  });
});

describe('the fault proxy, which passes every request on from the runner', () => {
  it("excuses a loss while the runner's event loop stood still for a period or more, and lists shorter stands with the loss", () => {
    const events: ChaosEvent[] = [
      { type: 'stall', worker: PROXY_STALLS, fromNs: s(9.2), toNs: s(9.5) },
      lost('w1.1', 'held/1/0', 10),
      { type: 'stall', worker: PROXY_STALLS, fromNs: s(19.5), toNs: s(19.6) },
      lost('w2.1', 'held/2/0', 20),
    ];
    const report = checkLoad(events, OPTIONS);
    expect(report.heldLocksLost.provoked.byCause.stalled).toBe(1);
    expect(report.heldLocksLost.unprovoked.first).toEqual([expect.objectContaining({ key: 'held/2/0', proxyStalledMs: 100 })]);
  });
});

describe("the worker's late heartbeats", () => {
  it('are counted with a loss outside the faults: any lock of that worker within the lease and margin before, with the latest lag', () => {
    const late = (worker: string, at: number, lagMs: number): ChaosEvent => ({
      type: 'lateHeartbeat',
      worker,
      key: 'held/1/7',
      atNs: s(at),
      lagMs,
    });
    const events: ChaosEvent[] = [
      late('w1.1', 2, 900),
      late('w1.1', 9, 300),
      late('w1.1', 9.6, 640),
      late('w2.1', 9.7, 800),
      lost('w1.1', 'held/1/0', 10),
    ];
    const report = checkLoad(events, OPTIONS);
    expect(report.heldLocksLost.unprovoked.first).toEqual([expect.objectContaining({ lateStarts: { count: 2, maxLagMs: 640 } })]);
  });
});

describe("the load run's verdict on acquisition calls", () => {
  const overdue = (at: number, settled: boolean): ChaosEvent => ({
    type: 'overdue',
    worker: 'w1.1',
    key: 'hot/0',
    startNs: s(10),
    atNs: s(at),
    boundMs: 7_000,
    settled,
  });

  it('counts a call that ran past its bound once, by its longest sighting', () => {
    const report = checkLoad([overdue(17.5, false), overdue(24.5, false), overdue(25, true)], OPTIONS);
    expect(report.acquisitionsOverdue).toBe(1);
    expect(report.worstOverdue).toEqual({ worker: 'w1.1', key: 'hot/0', ms: 15_000, boundMs: 7_000, settled: true });
  });

  it('takes the time the driver kept the worker paused out of the call', () => {
    const events: ChaosEvent[] = [
      { type: 'stop', worker: 'w1.1', atNs: s(11) },
      { type: 'cont', worker: 'w1.1', atNs: s(15) },
      overdue(17.5, true),
    ];
    expect(checkLoad(events, OPTIONS).acquisitionsOverdue).toBe(0);
  });

  it("adds up each worker's last tally of calls", () => {
    const tally = (worker: string, calls: number, failed: Record<string, number>): ChaosEvent => ({
      type: 'tally',
      worker,
      calls,
      granted: calls - 1,
      refused: 1,
      failed,
    });
    const events = [tally('w1.1', 5, {}), tally('w1.1', 9, { DynamoDBUnavailableError: 1 }), tally('w1.2', 3, { DynamoDBUnavailableError: 2 })];
    expect(checkLoad(events, OPTIONS).acquisitionCalls).toEqual({ calls: 12, granted: 10, refused: 2, failed: { DynamoDBUnavailableError: 3 } });
  });
});

describe("the load run's fault schedule", () => {
  it('reads which worker signed a request and which lock keys it names, through the proxy to DynamoDB Local', async () => {
    const proxy = await FaultProxy.start(localEndpoint());
    const dynamoDB = new DynamoDBClient({
      endpoint: proxy.endpoint,
      region: 'us-east-1',
      credentials: { accessKeyId: accessKeyOf('w2.13'), secretAccessKey: 'chaos' },
      maxAttempts: 1,
    });
    const seen: ProxiedRequest[] = [];
    proxy.setRule((request) => {
      seen.push(request);
      return { action: 'forward' };
    });
    try {
      // A table that does not exist: DynamoDB Local answers, which shows it takes the access key id.
      const error = await dynamoDB
        .send(new GetItemCommand({ TableName: 'chaos-load-no-such-table', Key: { key: { S: 'hot/3' } } }))
        .catch((e: unknown) => e as Error);
      expect((error as Error).name).toBe('ResourceNotFoundException');
    } finally {
      dynamoDB.destroy();
      await proxy.close();
    }
    expect(seen).toHaveLength(1);
    expect(senderOf(seen[0]!)).toBe(accessKeyOf('w2.13'));
    expect(accessKeyOf('w2.13')).not.toBe(accessKeyOf('w21.3'));
    expect(keysOf(seen[0]!)).toEqual(['hot/3']);
    expect(namesOnlyHotKeys(['hot/3', 'elect/0'])).toBe(true);
    expect(namesOnlyHotKeys(['hot/3', 'held/1/2'])).toBe(false);
    expect(namesOnlyHotKeys([])).toBe(false);
  });
});

describe('a short load run', () => {
  it('reports held locks lost by kind and cause, and acquisitions overdue, beside the plain report', async () => {
    const report = await runChaos({
      ...DEFAULT_CHAOS,
      ...LOAD_DEFAULTS,
      endpoint: localEndpoint(),
      seconds: 12,
      seed: 3,
      workers: 2,
      retryMode: 'adaptive',
      load: { held: 20, waits: 10, burst: 10, hotKeys: 2, elections: 1 },
    });
    // Safety holds under load as in the plain run.
    expect(report.check.overlaps).toEqual([]);
    expect(report.crashes).toEqual([]);
    expect(report.scan.malformed).toEqual([]);
    // It proved something: locks were held and asked for, hot keys throttled.
    expect(report.check.acquisitions).toBeGreaterThan(20);
    expect(report.check.acts).toBeGreaterThan(20);
    expect(report.acquisitionCalls?.calls).toBeGreaterThan(20);
    expect(report.loadFaults?.hotKeyThrottled).toBeGreaterThan(0);
    // Whether locks are lost here is what the long runs measure; here, that every loss is counted once.
    const lost = report.heldLocksLost!;
    const sum = (counts: Record<string, number>): number => Object.values(counts).reduce((a, b) => a + b, 0);
    expect(lost.total).toBe(lost.provoked.total + lost.unprovoked.total);
    expect(sum(lost.byKind)).toBe(lost.total);
    expect(sum(lost.provoked.byCause)).toBe(lost.provoked.total);
    expect(sum(report.check.lossesByKind)).toBe(lost.total);
    expect(typeof report.acquisitionsOverdue).toBe('number');
    expect(report.violations.some((v) => v.includes('outside the injected faults'))).toBe(lost.unprovoked.total > 0);
  }, 100_000);
});
