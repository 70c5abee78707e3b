/**
 * Every request the Java DynamoDB Lock Client sent in the recorded scenarios
 * must be what our request builders produce for the same inputs
 * (PROTOCOL.md §1.2, §3, §4).
 */
import { describe, expect, it } from '@jest/globals';
import { buildCreateTableRequest, encodeLockItem, type LockItem } from '../../src/protocol/index.js';
import { utf8Text, wireTypeOf, type WireItem } from '../../test-kit/dynamodb-json.js';
import { flagValue, loadJavaScenarios, lockTableOf, stepOf, type JavaRequest, type JavaScenario } from '../../test-kit/java-fixtures.js';
import { canonicalRequest, expectationFor, placeholderUsage, type RequestExpectation } from './java-expectations.js';

const scenarios = loadJavaScenarios();

interface RequestCase {
  readonly title: string;
  readonly scenario: JavaScenario;
  readonly request: JavaRequest;
  /** The expectation, or why none could be built (the test then fails with it). */
  readonly expectation: RequestExpectation | Error;
}

function caseFor(scenario: JavaScenario, request: JavaRequest): RequestCase {
  let expectation: RequestExpectation | Error;
  try {
    expectation = expectationFor(scenario, request);
  } catch (error) {
    expectation = error instanceof Error ? error : new Error(String(error));
  }
  const role = expectation instanceof Error ? 'UNMATCHED' : expectation.role;
  return {
    title: `${scenario.scenario}: request ${request.index} ${request.operation} (${role})`,
    scenario,
    request,
    expectation,
  };
}

const casesByScenario = new Map(scenarios.map((s) => [s, s.requests.map((r) => caseFor(s, r))]));

function matched(testCase: RequestCase): RequestExpectation {
  if (testCase.expectation instanceof Error) throw testCase.expectation;
  return testCase.expectation;
}

const typesOf = (item: LockItem): Record<string, string> =>
  Object.fromEntries(Object.entries(item).map(([name, value]) => [name, Object.keys(value).join('+')]));

const textOrNull = (data: Uint8Array | undefined): string | null => (data === undefined ? null : utf8Text(data));

it('finds at least one recorded scenario', () => {
  expect(scenarios.length).toBeGreaterThan(0);
});

describe.each(scenarios)('$scenario', (scenario) => {
  const cases = casesByScenario.get(scenario) ?? [];

  it('records every request (sequence and requests agree, indexes run 1..n)', () => {
    expect(scenario.requests.length).toBeGreaterThan(0);
    expect(scenario.requests.map((r) => r.index)).toStrictEqual(scenario.requests.map((_, i) => i + 1));
    expect(scenario.sequence).toStrictEqual(scenario.requests.map((r) => `${r.label} ${r.operation} ${r.response.status}`));
  });

  it('matches every request to a builder check', () => {
    expect(cases.map((c) => c.request.index)).toStrictEqual(scenario.requests.map((r) => r.index));
    const unmatched = cases.filter((c) => c.expectation instanceof Error).map((c) => (c.expectation as Error).message);
    expect(unmatched).toStrictEqual([]);
  });

  it.each(cases)('$title', (testCase) => {
    const expectation = matched(testCase);
    const { request } = testCase;

    // Our builder sends exactly the placeholders its expressions use.
    const usage = placeholderUsage(expectation.ours.input);
    expect(usage.defined).toStrictEqual(usage.used);

    // Same operation, same fields; every string byte for byte except the
    // generated SET list's numbering, resolved to name → value.
    expect(canonicalRequest(expectation.ours)).toStrictEqual(canonicalRequest(expectation.java));

    // The key is the one the harness asked for.
    const step = stepOf(scenario, request.label);
    const key = (request.request['Key'] ?? request.request['Item']) as WireItem | undefined;
    const argKey = flagValue(step, '--key');
    if (key !== undefined && argKey !== undefined) {
      expect(key[scenario.table.partitionKey]).toStrictEqual({ S: argKey });
      const argSortKey = flagValue(step, '--sort-key-value');
      if (scenario.table.sortKey !== null) expect(key[scenario.table.sortKey]).toStrictEqual({ S: argSortKey });
    }

    switch (expectation.kind) {
      case 'acquire': {
        // What Java reported for this acquisition (LockPeer's `acquired` event).
        const { record } = expectation.acquisition;
        const acquired = step.events.find((e) => e.event === 'acquired' && e.rvn === record.recordVersionNumber);
        expect(acquired).toBeDefined();
        expect(acquired?.owner).toBe(record.ownerName);
        expect(acquired?.lease_ms).toBe(record.leaseDurationMs);
        expect(acquired?.data ?? null).toBe(textOrNull(record.data));
        expect(acquired?.key).toBe(record.partitionKey);
        expect(acquired?.sort_key ?? undefined).toBe(record.sortKey);
        break;
      }
      case 'heartbeat': {
        const { heartbeat } = expectation;
        expect(heartbeat.held.ownerName).toBe(flagValue(step, '--owner'));
        expect(heartbeat.leaseDurationMs).toBe(Number(flagValue(step, '--lease-ms') ?? 20000));
        // LockPeer logs each RVN change it notices; where it did, it agrees.
        const logged = step.events.find((e) => e.event === 'heartbeat' && e.rvn === heartbeat.newRecordVersionNumber);
        if (logged !== undefined) {
          expect(logged.previous_rvn).toBe(heartbeat.held.recordVersionNumber);
          expect(logged.lease_ms).toBe(heartbeat.leaseDurationMs);
        }
        break;
      }
      case 'release': {
        const { release } = expectation;
        expect(release.held.ownerName).toBe(flagValue(step, '--owner'));
        const releasing = step.events.find((e) => e.event === 'releasing' && e.rvn === release.held.recordVersionNumber);
        expect(releasing?.delete).toBe(release.deleteLock);
        expect(textOrNull(release.data)).toBe(flagValue(step, '--release-data') ?? null);
        break;
      }
      case 'read':
        expect(expectation.ours.input['ConsistentRead']).toBe(true);
        break;
      case 'scan':
      case 'query':
        expect(expectation.java.input['ConsistentRead']).toBeUndefined();
        break;
      case 'create-table': {
        // Our on-demand form differs from the provisioned one in billing only.
        const table = lockTableOf(scenario);
        const { ProvisionedThroughput, ...provisioned } = buildCreateTableRequest(table, {
          billingMode: 'PROVISIONED',
          readCapacityUnits: expectation.readCapacityUnits,
          writeCapacityUnits: expectation.writeCapacityUnits,
        });
        const { BillingMode, ...onDemand } = buildCreateTableRequest(table, { billingMode: 'PAY_PER_REQUEST' });
        expect(ProvisionedThroughput).toStrictEqual({
          ReadCapacityUnits: expectation.readCapacityUnits,
          WriteCapacityUnits: expectation.writeCapacityUnits,
        });
        expect(BillingMode).toBe('PAY_PER_REQUEST');
        expect(onDemand).toStrictEqual(provisioned);
        expect('BillingMode' in provisioned).toBe(false);
        expect('ProvisionedThroughput' in onDemand).toBe(false);
        break;
      }
      case 'describe-table':
        expect(expectation.ours.input).toStrictEqual({ TableName: scenario.table.name });
        break;
    }
  });

  const acquisitions = cases.flatMap((c) => {
    const e = c.expectation;
    return e instanceof Error || e.kind !== 'acquire' ? [] : [{ title: c.title, acquisition: e.acquisition, request: c.request }];
  });

  // Encoding: what Java wrote decodes, and encodes back to the same attributes.
  if (acquisitions.length > 0) {
    it.each(acquisitions)('$title: item re-encodes to the same attributes', ({ acquisition, request }) => {
      const table = lockTableOf(scenario);
      const reencoded = encodeLockItem(table, acquisition.record);
      expect(Object.keys(reencoded).sort()).toStrictEqual(Object.keys(acquisition.writtenItem).sort());
      expect(typesOf(reencoded)).toStrictEqual(typesOf(acquisition.writtenItem));
      expect(reencoded).toStrictEqual(acquisition.writtenItem);
      // The Java item has the protocol's types: S everywhere, B for data.
      const wire = request.request['Item'] as WireItem | undefined;
      if (wire !== undefined) {
        for (const [name, value] of Object.entries(wire)) expect([name, wireTypeOf(value)]).toStrictEqual([name, name === 'data' ? 'B' : 'S']);
      }
    });
  }
});
