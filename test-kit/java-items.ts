/**
 * Helpers for the Java interoperability tests: the Java client's read rules
 * (PROTOCOL.md §2.5) written out independently of `src/`, attribute
 * name → type maps for comparing items, and the recorded Java requests of a
 * scenario made replayable against another table.
 */
import type { AttributeValue, PutItemCommandInput, UpdateItemCommandInput } from '@aws-sdk/client-dynamodb';
import type { Item } from './aws.js';
import { fromWireItem, fromWireRequest, wireTypeOf, type WireItem } from './dynamodb-json.js';
import type { JavaScenario } from './java-fixtures.js';

/** `{ name: type tag }` of an SDK item, e.g. `{ key: 'S', data: 'B' }`. Throws on a value without exactly one type. */
export function attributeTypes(item: Item): Record<string, string> {
  const types: Record<string, string> = {};
  for (const name of Object.keys(item).sort()) {
    const value = item[name] as unknown as Record<string, unknown>;
    const tags = Object.keys(value).filter((tag) => value[tag] !== undefined && tag !== '$unknown');
    if (tags.length !== 1) throw new Error(`attribute ${name} has ${tags.length} types: ${JSON.stringify(value)}`);
    types[name] = tags[0] as string;
  }
  return types;
}

/** `{ name: type tag }` of an item in DynamoDB wire JSON (as in the fixtures). */
export function wireAttributeTypes(item: WireItem): Record<string, string> {
  const types: Record<string, string> = {};
  for (const name of Object.keys(item).sort()) types[name] = wireTypeOf(item[name] as never);
  return types;
}

/** What `AmazonDynamoDBLockClient` makes of an item (PROTOCOL.md §2.5). */
export interface JavaView {
  readonly ownerName: string;
  /** `Long.parseLong(leaseDuration.s())`, as a bigint so nothing is rounded. */
  readonly leaseDuration: bigint;
  readonly recordVersionNumber: string;
  readonly isReleased: boolean;
  readonly data: Uint8Array | undefined;
  /** Everything left after removing data, owner, lease, RVN, isReleased and the partition key (Java keeps the sort key here). */
  readonly additionalAttributes: Item;
}

/** Java's `Long.parseLong`: optional sign, ASCII digits only, 64-bit range; throws NumberFormatException otherwise. */
export function javaParseLong(text: string): bigint {
  if (!/^[+-]?[0-9]+$/.test(text)) throw new Error(`NumberFormatException: For input string: "${text}"`);
  const value = BigInt(text);
  if (value > 9223372036854775807n || value < -9223372036854775808n) {
    throw new Error(`NumberFormatException: For input string: "${text}"`);
  }
  return value;
}

/**
 * Reads an item exactly as the Java client does, failing where Java would
 * fail (a NullPointerException on a missing or non-S attribute, a
 * NumberFormatException on a bad lease, a NullPointerException on a non-B data).
 */
export function javaReadLockItem(item: Item, partitionKeyName: string): JavaView {
  const rest: Item = { ...item };
  const take = (name: string): AttributeValue | undefined => {
    const value = rest[name];
    delete rest[name];
    return value;
  };
  const s = (name: string, value: AttributeValue | undefined): string => {
    if (value?.S === undefined) throw new Error(`NullPointerException: ${name}.s() on ${JSON.stringify(value)}`);
    return value.S;
  };
  const dataValue = take('data');
  let data: Uint8Array | undefined;
  if (dataValue !== undefined) {
    if (!(dataValue.B instanceof Uint8Array)) throw new Error('NullPointerException: data.b() is null');
    data = dataValue.B;
  }
  const ownerName = s('ownerName', take('ownerName'));
  const leaseDuration = javaParseLong(s('leaseDuration', take('leaseDuration')));
  const recordVersionNumber = s('recordVersionNumber', take('recordVersionNumber'));
  const isReleased = 'isReleased' in rest;
  take('isReleased');
  take(partitionKeyName);
  return { ownerName, leaseDuration, recordVersionNumber, isReleased, data, additionalAttributes: rest };
}

/** The canonical UUID form Java's `UUID.randomUUID().toString()` writes. */
export const JAVA_UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

/** `String.valueOf(long)` of a non-negative lease: digits, no sign, no leading zero, no exponent. */
export const JAVA_LEASE = /^(0|[1-9][0-9]*)$/;

/** The `final_items` of a scenario as SDK items. */
export function finalItems(scenario: JavaScenario): Item[] {
  return scenario.final_items.map((item) => fromWireItem(item));
}

/** The single final item of a scenario (throws unless there is exactly one). */
export function onlyFinalItem(scenario: JavaScenario): { wire: WireItem; item: Item } {
  if (scenario.final_items.length !== 1) {
    throw new Error(`${scenario.file}: expected exactly one final item, found ${scenario.final_items.length}`);
  }
  const wire = scenario.final_items[0] as WireItem;
  return { wire, item: fromWireItem(wire) };
}

/** The final item of a scenario whose partition key is `partitionKey`. */
export function finalItemByKey(scenario: JavaScenario, partitionKey: string): { wire: WireItem; item: Item } {
  const wire = scenario.final_items.find((item) => item[scenario.table.partitionKey]?.S === partitionKey);
  if (wire === undefined) throw new Error(`${scenario.file}: no final item with key ${JSON.stringify(partitionKey)}`);
  return { wire, item: fromWireItem(wire) };
}

/**
 * The `nth` (0-based) recorded request of `operation` sent by step `label`,
 * as SDK command input, with its table renamed to `tableName`.
 */
export function recordedRequest(
  scenario: JavaScenario,
  label: string,
  operation: string,
  tableName: string,
  nth = 0,
): Record<string, unknown> & { ExpressionAttributeValues?: Item; Item?: Item; Key?: Item } {
  const matching = scenario.requests.filter((r) => r.label === label && r.operation === operation);
  const request = matching[nth];
  if (request === undefined) {
    throw new Error(`${scenario.file}: step ${label} sent only ${matching.length} ${operation} request(s), wanted #${nth}`);
  }
  return { ...fromWireRequest(request.request), TableName: tableName };
}

/**
 * The Java client's takeover of a stale lock, exactly as recorded (owner-B's
 * PutItem in `acquire-expired-lock`: condition C7 on the RVN it watched
 * stand still for the lease), aimed at `tableName` and conditioned on
 * `watchedRvn`. It writes the item `key = "lock-1"`.
 */
export function javaStaleLockTakeover(scenarios: readonly JavaScenario[], tableName: string, watchedRvn: string): PutItemCommandInput {
  const scenario = scenarios.find((s) => s.scenario === 'acquire-expired-lock');
  if (scenario === undefined) throw new Error('no Java fixture scenario "acquire-expired-lock"');
  const template = recordedRequest(scenario, 'B', 'PutItem', tableName);
  return { ...(template as unknown as PutItemCommandInput), ExpressionAttributeValues: { ':rvn': { S: watchedRvn } } };
}

/** A recorded Java request of `scenario`'s step `label`, aimed at the item `partitionKey` of `tableName`, with `values` over its own. */
function javaWriteOn(
  scenarios: readonly JavaScenario[],
  scenario: string,
  label: string,
  at: { readonly tableName: string; readonly partitionKey: string },
  values: Item,
): UpdateItemCommandInput {
  const found = scenarios.find((s) => s.scenario === scenario);
  if (found === undefined) throw new Error(`no Java fixture scenario ${JSON.stringify(scenario)}`);
  const template = recordedRequest(found, label, 'UpdateItem', at.tableName);
  const key = { [found.table.partitionKey]: { S: at.partitionKey } };
  return {
    ...(template as unknown as UpdateItemCommandInput),
    Key: key,
    ExpressionAttributeValues: { ...template.ExpressionAttributeValues, ...values },
  };
}

/**
 * The Java client's heartbeat, exactly as recorded (owner-A's first
 * UpdateItem in `heartbeat`: `SET #ld = :ld, #rvn = :newRvn` conditioned on
 * RVN and owner), from `held.rvn` to `newRvn` on the item `partitionKey`.
 */
export function javaHeartbeat(
  scenarios: readonly JavaScenario[],
  at: { readonly tableName: string; readonly partitionKey: string },
  held: { readonly ownerName: string; readonly leaseMs: number; readonly rvn: string },
  newRvn: string,
): UpdateItemCommandInput {
  return javaWriteOn(scenarios, 'heartbeat', 'A', at, {
    ':rvn': { S: held.rvn },
    ':on': { S: held.ownerName },
    ':ld': { S: String(held.leaseMs) },
    ':newRvn': { S: newRvn },
  });
}

/**
 * The Java client's acquisition of a released lock with
 * `updateExistingLockRecord`, exactly as recorded (owner-B's UpdateItem in
 * `acquire-released-lock-update-existing`: the SET list and `REMOVE #ir`,
 * conditioned on `#ir = :ir`), writing `newRvn` on the item `partitionKey`.
 */
export function javaReleasedLockUpdate(
  scenarios: readonly JavaScenario[],
  at: { readonly tableName: string; readonly partitionKey: string },
  newRvn: string,
): UpdateItemCommandInput {
  return javaWriteOn(scenarios, 'acquire-released-lock-update-existing', 'B', at, { ':v1': { S: newRvn } });
}
