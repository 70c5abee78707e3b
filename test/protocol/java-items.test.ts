/**
 * Every lock item the Java client left in the table or read from it decodes
 * with our codec to the fields Java itself reported (PROTOCOL.md §2.5).
 */
import { describe, expect, it } from '@jest/globals';
import { decodeLockItem, LockAttribute, type LockRecord } from '../../src/protocol/index.js';
import { base64ToBytes, fromWireItem, utf8Text, type WireItem } from '../../test-kit/dynamodb-json.js';
import {
  eventsOf,
  flagValue,
  loadJavaScenarios,
  lockTableOf,
  type JavaRequest,
  type JavaScenario,
  type JavaStepEvent,
} from '../../test-kit/java-fixtures.js';

const scenarios = loadJavaScenarios();

interface ItemCase {
  readonly title: string;
  readonly scenario: JavaScenario;
  readonly item: WireItem;
  /** The read that returned it; `undefined` for the table contents after the scenario. */
  readonly read: JavaRequest | undefined;
}

function itemCases(scenario: JavaScenario): ItemCase[] {
  const pk = scenario.table.partitionKey;
  const name = (item: WireItem): string => JSON.stringify(item[pk]?.S);
  const cases: ItemCase[] = [];
  for (const read of scenario.requests) {
    if (read.response.status !== 200) continue;
    if (read.operation === 'GetItem') {
      const item = read.response.body['Item'] as WireItem | undefined;
      if (item !== undefined) {
        cases.push({ title: `${scenario.scenario}: request ${read.index} GetItem response ${name(item)}`, scenario, item, read });
      }
    }
    if (read.operation === 'Scan' || read.operation === 'Query') {
      const items = (read.response.body['Items'] as WireItem[] | undefined) ?? [];
      items.forEach((item, i) =>
        cases.push({ title: `${scenario.scenario}: request ${read.index} ${read.operation} item ${i} ${name(item)}`, scenario, item, read }),
      );
    }
  }
  scenario.final_items.forEach((item, i) =>
    cases.push({ title: `${scenario.scenario}: final item ${i} ${name(item)}`, scenario, item, read: undefined }),
  );
  return cases;
}

const PROTOCOL_ATTRIBUTES = new Set<string>(Object.values(LockAttribute));

/** What the lock with a given RVN looked like, per LockPeer's events. */
interface ExpectedLock {
  readonly owner: string;
  readonly leaseMs: number;
  /** `undefined` when the events cannot tell (a read racing a release). */
  readonly released: boolean | undefined;
  readonly data: string | null | undefined;
}

/**
 * Follows an RVN back through `heartbeat` events to the `acquired` event that
 * started it, then applies a later mark-released release (`releasing` with
 * `delete: false`, then `released: true`), which keeps owner, lease and RVN
 * and replaces the data only when LockPeer passed `--release-data`.
 */
function expectedLock(scenario: JavaScenario, rvn: string, atMs: number): ExpectedLock | undefined {
  const heartbeat = eventsOf(scenario, 'heartbeat').find(({ event }) => event.rvn === rvn);
  let base: Omit<ExpectedLock, 'released'> | undefined;
  if (heartbeat !== undefined) {
    const previous = heartbeat.event.previous_rvn === undefined ? undefined : expectedLock(scenario, heartbeat.event.previous_rvn, atMs);
    if (previous === undefined || heartbeat.event.lease_ms === undefined) return undefined;
    base = { ...previous, leaseMs: heartbeat.event.lease_ms };
  } else {
    const acquired = eventsOf(scenario, 'acquired').find(({ event }) => event.rvn === rvn)?.event;
    if (acquired?.owner === undefined || acquired.lease_ms === undefined) return undefined;
    base = { owner: acquired.owner, leaseMs: acquired.lease_ms, data: acquired.data ?? null };
  }

  const release = eventsOf(scenario, 'releasing').find(({ event }) => event.rvn === rvn && event.delete === false);
  if (release === undefined) return { ...base, released: false };
  const events = release.step.events;
  const done = events.slice(events.indexOf(release.event)).find((e) => e.event === 'released');
  if (done?.released !== true || atMs < release.event.t_ms) return { ...base, released: false };
  if (atMs < done.t_ms) return { ...base, released: undefined, data: undefined };
  return { ...base, released: true, data: flagValue(release.step, '--release-data') ?? base.data };
}

/** The `lock` event (a LockItem Java returned from get or scan) that reports this item, if any. */
function javaReportOf(scenario: JavaScenario, read: JavaRequest | undefined, item: WireItem): JavaStepEvent | undefined {
  if (read === undefined) return undefined;
  const step = scenario.steps.find((s) => s.label === read.label);
  return step?.events.find((e) => e.event === 'lock' && e.found !== false && e.key === item[scenario.table.partitionKey]?.S);
}

const text = (record: LockRecord): string | null => (record.data === undefined ? null : utf8Text(record.data));

describe.each(scenarios)('$scenario', (scenario) => {
  const cases = itemCases(scenario);
  const table = lockTableOf(scenario);

  if (cases.length === 0) {
    it('leaves and reads no lock item', () => {
      expect(scenario.final_items).toStrictEqual([]);
    });
    return;
  }

  it.each(cases)('$title', ({ item, read }) => {
    const record = decodeLockItem(table, fromWireItem(item));

    // Against the raw attributes.
    expect(record.partitionKey).toBe(item[table.partitionKeyName]?.S);
    expect(record.sortKey).toBe(table.sortKeyName === undefined ? undefined : item[table.sortKeyName]?.S);
    expect(record.ownerName).toBe(item['ownerName']?.S);
    expect(typeof record.leaseDurationMs).toBe('number');
    expect(record.leaseDurationMs).toBe(Number.parseInt(item['leaseDuration']?.S ?? 'missing', 10));
    expect(record.recordVersionNumber).toBe(item['recordVersionNumber']?.S);
    expect(record.isReleased).toBe('isReleased' in item);
    const wireData = item['data']?.B;
    expect(record.data).toStrictEqual(wireData === undefined ? undefined : base64ToBytes(wireData));
    // Additional attributes: whatever is not protocol or key (Java would also list the sort key).
    const extra = Object.keys(item).filter(
      (name) => !PROTOCOL_ATTRIBUTES.has(name) && name !== table.partitionKeyName && name !== table.sortKeyName,
    );
    expect(Object.keys(record.additionalAttributes).sort()).toStrictEqual(extra.sort());

    // Against what Java reported for the RVN: who wrote it, with which lease, released or not.
    const expected = expectedLock(scenario, record.recordVersionNumber, read?.t_ms ?? Number.POSITIVE_INFINITY);
    expect(expected).toBeDefined();
    expect(record.ownerName).toBe(expected?.owner);
    expect(record.leaseDurationMs).toBe(expected?.leaseMs);
    if (expected?.released !== undefined) expect(record.isReleased).toBe(expected.released);
    if (expected?.data !== undefined) expect(text(record)).toBe(expected.data);

    // Against the LockItem Java built from this very response, where LockPeer printed it.
    const report = javaReportOf(scenario, read, item);
    if (report !== undefined) {
      expect(record.partitionKey).toBe(report.key);
      expect(record.sortKey).toBe(report.sort_key ?? undefined);
      expect(record.ownerName).toBe(report.owner);
      expect(record.recordVersionNumber).toBe(report.rvn);
      expect(record.leaseDurationMs).toBe(report.lease_ms);
      expect(text(record)).toBe(report.data);
      expect(record.isReleased).toBe(report.released);
    }
  });

  const reported = eventsOf(scenario, 'lock').length + eventsOf(scenario, 'scan-done').length;
  if (reported === 0) return;

  it('accounts for every lock Java reported from a read', () => {
    const reads = scenario.requests.filter((r) => ['GetItem', 'Scan', 'Query'].includes(r.operation));
    for (const { step, event } of eventsOf(scenario, 'lock')) {
      const mine = reads.filter((r) => r.label === step.label);
      const items = mine.flatMap((r) => {
        const body = r.response.body;
        return [...((body['Items'] as WireItem[] | undefined) ?? []), ...(body['Item'] === undefined ? [] : [body['Item'] as WireItem])];
      });
      const sameKey = items.filter((item) => item[scenario.table.partitionKey]?.S === event.key);
      if (event.found === false) {
        // getLock reports a released lock as absent; a missing lock has no item.
        const decoded = sameKey.map((item) => decodeLockItem(table, fromWireItem(item)));
        expect([event.method, decoded.every((r) => r.isReleased)]).toStrictEqual(['getLock', true]);
      } else {
        expect(sameKey).toHaveLength(1);
      }
    }
    for (const { step, event } of eventsOf(scenario, 'scan-done')) {
      const scanned = reads
        .filter((r) => r.label === step.label && r.operation === 'Scan')
        .reduce((n, r) => n + ((r.response.body['Items'] as unknown[] | undefined)?.length ?? 0), 0);
      expect(scanned).toBe(event.count);
    }
  });
});
