/**
 * For each request the Java client sent in a recorded scenario: which of our
 * builders produces the same request, called with inputs recovered from the
 * recording (the table, the key, the owner, the lease, the RVNs, the data and
 * the acquisition path), and a canonical form to compare the two.
 */
import type { AttributeValue } from '@aws-sdk/client-dynamodb';
import {
  buildAcquireRequest,
  buildCreateTableRequest,
  buildDescribeTableRequest,
  buildGetLockRequest,
  buildHeartbeatRequest,
  buildQueryRequest,
  buildReleaseRequest,
  buildScanRequest,
  decodeLockItem,
  type AcquisitionPath,
  type HeldLockState,
  type LockItem,
  type LockRecord,
} from '../../src/protocol/index.js';
import { fromWireItem, fromWireRequest, type WireItem } from '../../test-kit/dynamodb-json.js';
import { hasFlag, lockKeyOf, lockTableOf, stepOf, type JavaRequest, type JavaScenario } from '../../test-kit/java-fixtures.js';

/** A request as an operation name and an SDK-shaped input. */
export interface SentRequest {
  readonly operation: string;
  readonly input: Readonly<Record<string, unknown>>;
}

interface AcquisitionInfo {
  readonly path: AcquisitionPath;
  readonly updateExistingLockRecord: boolean;
  /** The item the write leaves (PutItem `Item`, or `Key` plus the SET list), decoded. */
  readonly record: LockRecord;
  /** That item, SDK-shaped. */
  readonly writtenItem: LockItem;
}

interface HeartbeatInfo {
  readonly held: HeldLockState;
  readonly newRecordVersionNumber: string;
  readonly leaseDurationMs: number;
}

interface ReleaseInfo {
  readonly held: HeldLockState;
  readonly deleteLock: boolean;
  readonly data: Uint8Array | undefined;
}

export type RequestKind =
  | { readonly kind: 'acquire'; readonly acquisition: AcquisitionInfo }
  | { readonly kind: 'heartbeat'; readonly heartbeat: HeartbeatInfo }
  | { readonly kind: 'release'; readonly release: ReleaseInfo }
  | { readonly kind: 'read' | 'scan' | 'query' | 'describe-table' }
  | { readonly kind: 'create-table'; readonly readCapacityUnits: number; readonly writeCapacityUnits: number };

export type RequestExpectation = RequestKind & {
  /** Short description for test names, e.g. `expired path`. */
  readonly role: string;
  /** What the Java client sent, SDK-shaped. */
  readonly java: SentRequest;
  /** What our builder produces for the same inputs. */
  readonly ours: SentRequest;
};

/** A request no builder check could be matched to; the test reports it. */
export class UnmatchedRequestError extends Error {
  constructor(scenario: JavaScenario, request: JavaRequest, reason: string) {
    super(`${scenario.file}: request ${request.index} ${request.operation} could not be matched to a builder: ${reason}`);
  }
}

type Names = Record<string, string>;
type Values = Record<string, AttributeValue>;

const GENERATED_SET_LIST = /^SET ((?:#k\d+=:v\d+,)*#k\d+=:v\d+)(.*)$/s;

/** The canonical form two equivalent requests share (see {@link canonicalRequest}). */
export interface CanonicalRequest {
  readonly operation: string;
  readonly input: Record<string, unknown>;
  /** The generated `#kN=:vN` assignments resolved to attribute name → value; absent without one. */
  readonly setList?: Record<string, AttributeValue>;
}

/**
 * Everything stays byte for byte, except the generated `SET #k0=:v0,…` list
 * (PROTOCOL.md §3.3 U6), whose numbering follows Java's HashMap order: its
 * `#kN`/`:vN` placeholders are removed from the names and values and the
 * assignments are compared as a map from attribute name to value. The
 * expression string itself is kept (same count ⇒ same bytes), and its
 * numbering must run `#k0=:v0,#k1=:v1,…` with no gap and no space.
 */
export function canonicalRequest(request: SentRequest): CanonicalRequest {
  const input: Record<string, unknown> = { ...request.input };
  const expression = input['UpdateExpression'];
  const match = typeof expression === 'string' ? GENERATED_SET_LIST.exec(expression) : null;
  if (match === null) return { operation: request.operation, input };

  const names: Names = { ...(input['ExpressionAttributeNames'] as Names | undefined) };
  const values: Values = { ...(input['ExpressionAttributeValues'] as Values | undefined) };
  const setList: Record<string, AttributeValue> = {};
  (match[1] ?? '').split(',').forEach((assignment, i) => {
    if (assignment !== `#k${i}=:v${i}`) {
      throw new Error(`Generated SET list is not numbered #k0=:v0,#k1=:v1,…: ${JSON.stringify(expression)}`);
    }
    const name = names[`#k${i}`];
    const value = values[`:v${i}`];
    if (name === undefined || value === undefined) {
      throw new Error(`#k${i} or :v${i} is used by ${JSON.stringify(expression)} but not defined`);
    }
    if (name in setList) throw new Error(`Attribute ${name} is assigned twice by ${JSON.stringify(expression)}`);
    setList[name] = value;
    delete names[`#k${i}`];
    delete values[`:v${i}`];
  });
  input['ExpressionAttributeNames'] = names;
  input['ExpressionAttributeValues'] = values;
  return { operation: request.operation, input, setList };
}

/** Placeholders used by a request's expressions, and those it defines. */
export function placeholderUsage(input: Readonly<Record<string, unknown>>): {
  used: string[];
  defined: string[];
} {
  const expressions = ['ConditionExpression', 'UpdateExpression', 'KeyConditionExpression', 'FilterExpression', 'ProjectionExpression']
    .map((field) => input[field])
    .filter((value): value is string => typeof value === 'string');
  const used = new Set<string>();
  for (const expression of expressions) {
    for (const token of expression.match(/[#:][A-Za-z0-9_]+/g) ?? []) used.add(token);
  }
  const defined = [
    ...Object.keys((input['ExpressionAttributeNames'] as Names | undefined) ?? {}),
    ...Object.keys((input['ExpressionAttributeValues'] as Values | undefined) ?? {}),
  ];
  return { used: [...used].sort(), defined: defined.sort() };
}

function stringValue(values: Values, placeholder: string, scenario: JavaScenario, request: JavaRequest): string {
  const value = values[placeholder]?.S;
  if (value === undefined) throw new UnmatchedRequestError(scenario, request, `no string value ${placeholder}`);
  return value;
}

/**
 * The acquisition path, judged from what the same Java process read last
 * before writing (PROTOCOL.md §5.2): nothing ⇒ absent; an item with
 * `isReleased` ⇒ released; a held item ⇒ expired (it was watched unchanged).
 */
function acquisitionPath(scenario: JavaScenario, request: JavaRequest): AcquisitionPath {
  const read = [...scenario.requests].reverse().find((r) => r.index < request.index && r.label === request.label && r.operation === 'GetItem');
  if (read === undefined) throw new UnmatchedRequestError(scenario, request, 'no GetItem by the same process before this write');
  const item = read.response.body['Item'] as WireItem | undefined;
  if (item === undefined || Object.keys(item).length === 0) return { kind: 'absent' };
  const readRvn = item['recordVersionNumber']?.S;
  if (readRvn === undefined) throw new UnmatchedRequestError(scenario, request, `GetItem ${read.index} returned an item without RVN`);
  if (item['isReleased'] !== undefined) {
    const consistently = hasFlag(stepOf(scenario, request.label), '--consistent-released');
    return consistently ? { kind: 'released', readRecordVersionNumber: readRvn } : { kind: 'released' };
  }
  return { kind: 'expired', watchedRecordVersionNumber: readRvn };
}

const pathRole = (path: AcquisitionPath): string =>
  path.kind === 'released' && path.readRecordVersionNumber !== undefined ? 'released path, consistent' : `${path.kind} path`;

function heldState(scenario: JavaScenario, request: JavaRequest, key: WireItem, values: Values): HeldLockState {
  return {
    ...lockKeyOf(scenario, key),
    ownerName: stringValue(values, ':on', scenario, request),
    recordVersionNumber: stringValue(values, ':rvn', scenario, request),
  };
}

function leaseFrom(text: string, scenario: JavaScenario, request: JavaRequest): number {
  if (!/^\d+$/.test(text)) throw new UnmatchedRequestError(scenario, request, `lease ${JSON.stringify(text)} is not a decimal integer`);
  return Number(text);
}

/** Derives our builder's request for one recorded request; throws {@link UnmatchedRequestError}. */
export function expectationFor(scenario: JavaScenario, request: JavaRequest): RequestExpectation {
  const table = lockTableOf(scenario);
  const body = request.request;
  const java: SentRequest = { operation: request.operation, input: fromWireRequest(body) };
  const values = (java.input['ExpressionAttributeValues'] as Values | undefined) ?? {};
  const unmatched = (reason: string): never => {
    throw new UnmatchedRequestError(scenario, request, reason);
  };
  const built = (operation: string, input: object): SentRequest => ({ operation, input: input as Record<string, unknown> });

  switch (request.operation) {
    case 'CreateTable': {
      const throughput = body['ProvisionedThroughput'] as { ReadCapacityUnits: number; WriteCapacityUnits: number } | undefined;
      if (throughput === undefined) return unmatched('CreateTable without ProvisionedThroughput');
      const billing = {
        billingMode: 'PROVISIONED',
        readCapacityUnits: throughput.ReadCapacityUnits,
        writeCapacityUnits: throughput.WriteCapacityUnits,
      } as const;
      return {
        kind: 'create-table',
        role: 'provisioned',
        readCapacityUnits: billing.readCapacityUnits,
        writeCapacityUnits: billing.writeCapacityUnits,
        java,
        ours: built('CreateTable', buildCreateTableRequest(table, billing)),
      };
    }
    case 'DescribeTable':
      return { kind: 'describe-table', role: 'table check', java, ours: built('DescribeTable', buildDescribeTableRequest(table)) };
    case 'GetItem': {
      const key = body['Key'] as WireItem | undefined;
      if (key === undefined) return unmatched('GetItem without Key');
      return { kind: 'read', role: 'read', java, ours: built('GetItem', buildGetLockRequest(table, lockKeyOf(scenario, key))) };
    }
    case 'Scan': {
      const exclusiveStartKey = java.input['ExclusiveStartKey'] as LockItem | undefined;
      return { kind: 'scan', role: 'list', java, ours: built('Scan', buildScanRequest(table, { exclusiveStartKey })) };
    }
    case 'Query': {
      const exclusiveStartKey = java.input['ExclusiveStartKey'] as LockItem | undefined;
      const partitionKey = stringValue(values, ':pk', scenario, request);
      return { kind: 'query', role: 'list', java, ours: built('Query', buildQueryRequest(table, partitionKey, { exclusiveStartKey })) };
    }
    case 'PutItem': {
      const wireItem = body['Item'] as WireItem | undefined;
      if (wireItem === undefined) return unmatched('PutItem without Item');
      const writtenItem = fromWireItem(wireItem);
      return acquisition(writtenItem);
    }
    case 'UpdateItem': {
      const key = body['Key'] as WireItem | undefined;
      if (key === undefined) return unmatched('UpdateItem without Key');
      if (':v0' in values) {
        const { setList } = canonicalRequest(java);
        if (setList === undefined) return unmatched(`:v0 without a generated SET list: ${String(body['UpdateExpression'])}`);
        return acquisition({ ...fromWireItem(key), ...setList });
      }
      if (':newRvn' in values) {
        const heartbeat: HeartbeatInfo = {
          held: heldState(scenario, request, key, values),
          newRecordVersionNumber: stringValue(values, ':newRvn', scenario, request),
          leaseDurationMs: leaseFrom(stringValue(values, ':ld', scenario, request), scenario, request),
        };
        const names = (java.input['ExpressionAttributeNames'] as Names | undefined) ?? {};
        const data = values[':d']?.B;
        const deleteData = names['#d'] !== undefined && data === undefined;
        return {
          kind: 'heartbeat',
          role: data !== undefined ? 'heartbeat, new data' : deleteData ? 'heartbeat, delete data' : 'heartbeat',
          heartbeat,
          java,
          ours: built(
            'UpdateItem',
            buildHeartbeatRequest(table, heartbeat.held, {
              newRecordVersionNumber: heartbeat.newRecordVersionNumber,
              leaseDurationMs: heartbeat.leaseDurationMs,
              data,
              deleteData,
            }).input,
          ),
        };
      }
      if (':ir' in values) {
        const release: ReleaseInfo = { held: heldState(scenario, request, key, values), deleteLock: false, data: values[':d']?.B };
        const ours = buildReleaseRequest(table, release.held, { deleteLock: false, data: release.data });
        return {
          kind: 'release',
          role: release.data === undefined ? 'release, mark released' : 'release, mark released with data',
          release,
          java,
          ours: built(ours.operation, ours.input),
        };
      }
      return unmatched(`unknown UpdateItem shape: ${String(body['UpdateExpression'])}`);
    }
    case 'DeleteItem': {
      const key = body['Key'] as WireItem | undefined;
      if (key === undefined) return unmatched('DeleteItem without Key');
      const release: ReleaseInfo = { held: heldState(scenario, request, key, values), deleteLock: true, data: undefined };
      const ours = buildReleaseRequest(table, release.held, { deleteLock: true });
      return { kind: 'release', role: 'release, delete', release, java, ours: built(ours.operation, ours.input) };
    }
    default:
      return unmatched('no builder for this operation');
  }

  function acquisition(writtenItem: LockItem): RequestExpectation {
    const record = decodeLockItem(table, writtenItem);
    const path = acquisitionPath(scenario, request);
    const updateExistingLockRecord = hasFlag(stepOf(scenario, request.label), '--update-existing');
    const ours = buildAcquireRequest(table, record, path, { updateExistingLockRecord });
    return {
      kind: 'acquire',
      role: pathRole(path),
      acquisition: { path, updateExistingLockRecord, record, writtenItem },
      java,
      ours: built(ours.operation, ours.input),
    };
  }
}
