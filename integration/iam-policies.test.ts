/**
 * The IAM policies of docs/iam/ and the grants of docs/lock-table.md cannot
 * drift from the code: each feature runs against DynamoDB Local on a client
 * that records the IAM action of every call it sends (test-kit/iam-actions.ts),
 * and each document must grant every action its features sent, on the right
 * table, and nothing that none of them sent.
 */
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { PutItemCommand, type DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { LockClient, type LockClientSettings } from '../src/index.js';
import { newLocalClient, uniqueTableName } from '../test-kit/aws.js';
import { createDataTable } from '../test-kit/data-table.js';
import { recordIamActions, type ActionsByTable } from '../test-kit/iam-actions.js';
import { REPO_ROOT } from '../test-kit/processes.js';
import { waitUntil } from '../test-kit/test-locks.js';

/** The table names the documents use, for the tables of this run. */
const LOCKS = 'locks';
const FENCING = 'locks-fencing';
const DATA = 'YOUR_DATA_TABLE';
/** How long a lone heartbeat is held back in the batching run: more than its heartbeat period of 400 ms. */
const HELD_HEARTBEAT_MS = 600;

const tables = { locks: uniqueTableName('iam-locks'), fencing: uniqueTableName('iam-fencing'), data: '' };
const opened: { clients: LockClient[]; dynamoDB: DynamoDBClient[] } = { clients: [], dynamoDB: [] };

type Feature =
  | 'locking'
  | 'batched'
  | 'semaphores'
  | 'listing'
  | 'gc'
  | 'guarded'
  | 'fencing'
  | 'groups'
  | 'fenced-groups'
  | 'create-table'
  | 'create-fencing-table';
/** Document → table (as the documents name it) → actions. */
type Grants = Map<string, Set<string>>;
const recorded = new Map<Feature, Grants>();

function documentName(table: string): string {
  if (table === tables.locks) return LOCKS;
  if (table === tables.fencing) return FENCING;
  if (table === tables.data) return DATA;
  return `other table ${table}`;
}

/** Runs `feature` on a lock client of its own and keeps the actions it sent. */
async function run(
  feature: Feature,
  settings: Partial<LockClientSettings>,
  body: (client: LockClient, seen: ActionsByTable, dynamoDB: DynamoDBClient) => Promise<void>,
): Promise<void> {
  const dynamoDB = newLocalClient();
  opened.dynamoDB.push(dynamoDB);
  const seen: ActionsByTable = recordIamActions(dynamoDB);
  const client = new LockClient({
    tableName: tables.locks,
    ownerName: feature,
    leaseDuration: 2_000,
    heartbeatPeriod: 400,
    ...settings,
    dynamoDB,
  });
  opened.clients.push(client);
  await body(client, seen, dynamoDB);
  await client.close();
  const grants: Grants = new Map();
  for (const [table, actions] of seen) grants.set(documentName(table), new Set(actions));
  recorded.set(feature, grants);
}

beforeAll(async () => {
  const admin = newLocalClient();
  opened.dynamoDB.push(admin);
  tables.data = await createDataTable(admin, 'iam-data');

  await run('create-table', {}, async (client) => {
    await client.createLockTable();
    await client.createLockTable({ ifNotExists: true });
  });
  await run('create-fencing-table', { fencingTableName: tables.fencing }, (client) => client.createFencingTable());

  await run('locking', { heartbeatBatchSize: 1 }, async (client) => {
    const lock = await client.acquireLock('a', { deleteLockOnRelease: false });
    await lock.sendHeartbeat();
    const manual = lock.recordVersionNumber;
    await waitUntil('a background heartbeat', () => lock.recordVersionNumber !== manual, { timeoutMs: 2_000 });
    await client.getLock('someone-else');
    await lock.release();
    await (await client.acquireLock('a', { acquireOnlyIfLockAlreadyExists: true })).release();
  });

  await run('batched', { heartbeatConcurrency: 1 }, async (client, seen, dynamoDB) => {
    const batched = (): boolean => seen.get(tables.locks)?.has('dynamodb:PartiQLUpdate') === true;
    // Heartbeats go out together only when several fall due while one is in flight. Their first beats are spread
    // over the period and a lone one takes milliseconds here, so hold each lone heartbeat longer than a period
    // until a batch was sent: with one slot, the heartbeats that fall due meanwhile must then go together.
    dynamoDB.middlewareStack.add(
      (next, context) => async (args) => {
        if (context.commandName === 'UpdateItemCommand' && !batched()) await sleep(HELD_HEARTBEAT_MS);
        return next(args);
      },
      { step: 'finalizeRequest', name: 'slowLoneHeartbeats' },
    );
    await Promise.all(['b1', 'b2', 'b3', 'b4', 'b5', 'b6'].map((key) => client.acquireLock(key)));
    await waitUntil('a batch of heartbeats', batched, { timeoutMs: 20_000 });
  });

  await run('semaphores', {}, async (client) => {
    // Two permits of two: read in a round (BatchGetItem) before they are taken together.
    const permits = await client.acquirePermits('iam-semaphore', { permits: 2, count: 2 });
    await permits.release();
  });

  await run('listing', {}, async (client) => {
    for await (const snapshot of client.getAllLocks()) void snapshot;
    for await (const snapshot of client.getLocksByPartitionKey('b1')) void snapshot;
  });

  await run('gc', {}, async (client) => {
    const item = { key: { S: 'gc-abandoned' }, ownerName: { S: 'dead' }, leaseDuration: { S: '100' }, recordVersionNumber: { S: 'rvn' } };
    await admin.send(new PutItemCommand({ TableName: tables.locks, Item: item }));
    const report = await client.collectAbandoned({ partitionKeyPrefix: 'gc-' });
    expect(report.deleted.map((lock) => lock.partitionKey)).toEqual(['gc-abandoned']);
  });

  await run('guarded', { heartbeatBatchSize: 1 }, async (client) => {
    const lock = await client.acquireLock('g');
    const key = (id: string) => ({ id: { S: id } });
    await lock.transactWrite([
      { Put: { TableName: tables.data, Item: { ...key('put'), n: { N: '1' } } } },
      {
        Update: {
          TableName: tables.data,
          Key: key('update'),
          UpdateExpression: 'SET n = :one',
          ExpressionAttributeValues: { ':one': { N: '1' } },
        },
      },
      { Delete: { TableName: tables.data, Key: key('delete') } },
      { ConditionCheck: { TableName: tables.data, Key: key('put-before'), ConditionExpression: 'attribute_not_exists(id)' } },
    ]);
  });

  await run('fencing', { heartbeatBatchSize: 1, fencingTableName: tables.fencing }, async (client) => {
    await (await client.acquireLock('f')).release();
    await (await client.acquireLock('f')).release();
  });

  await run('groups', { heartbeatBatchSize: 1 }, async (client) => {
    const group = await client.acquireLocks(['group-1', 'group-2'], { deleteLockOnRelease: false });
    await group.release();
    await (await client.acquireLocks(['group-1', 'group-2'])).release();
  });

  await run('fenced-groups', { heartbeatBatchSize: 1, fencingTableName: tables.fencing }, async (client) => {
    await (await client.acquireLocks(['fenced-group-1', 'fenced-group-2'])).release();
  });
}, 60_000);

afterAll(async () => {
  await Promise.allSettled(opened.clients.map((client) => client.close()));
  for (const client of opened.dynamoDB) client.destroy();
});

// ── What the documents grant ────────────────────────────────────────────────

const read = (path: string): string => readFileSync(join(REPO_ROOT, path), 'utf8');

function addGrant(grants: Grants, table: string, actions: Iterable<string>): Grants {
  const set = grants.get(table) ?? new Set<string>();
  for (const action of actions) set.add(action);
  grants.set(table, set);
  return grants;
}

/** A policy file: each statement's actions on the table its Resource names. */
function policyFile(file: string): Grants {
  const policy = JSON.parse(read(`docs/iam/${file}`)) as { Statement: { Effect: string; Action: string[]; Resource: string }[] };
  const grants: Grants = new Map();
  for (const statement of policy.Statement) {
    expect(statement.Effect).toBe('Allow');
    addGrant(grants, statement.Resource.slice(statement.Resource.lastIndexOf('table/') + 'table/'.length), statement.Action);
  }
  return grants;
}

/** The fenced code block of docs/lock-table.md in `language`; its `dynamodb:` actions are the lock table's. */
function snippet(language: string, from?: RegExp): Grants {
  const block = new RegExp('```' + language + '\\n([\\s\\S]*?)```').exec(read('docs/lock-table.md'))?.[1];
  if (block === undefined) throw new Error(`docs/lock-table.md has no ${language} block`);
  const text = from === undefined ? block : block.slice(block.search(from));
  return addGrant(
    new Map(),
    LOCKS,
    [...text.matchAll(/dynamodb:[A-Za-z]+/g)].map(([action]) => action),
  );
}

function union(...all: Grants[]): Grants {
  const grants: Grants = new Map();
  for (const one of all) for (const [table, actions] of one) addGrant(grants, table, actions);
  return grants;
}

const locking = (): Grants => policyFile('locking.json');
const defaults = (): Grants => policyFile('locking-batched-heartbeats.json');
/** `own`: what the document adds to the locking policy, each of which its feature must send. */
const DOCUMENTS: { name: string; grants: () => Grants; features: Feature[]; own?: () => Grants }[] = [
  { name: 'locking.json', grants: locking, features: ['locking', 'groups'] },
  { name: 'locking-batched-heartbeats.json', grants: defaults, features: ['locking', 'batched', 'groups', 'semaphores'] },
  {
    name: 'locking-batched-heartbeats-listing.json',
    grants: () => policyFile('locking-batched-heartbeats-listing.json'),
    features: ['locking', 'batched', 'groups', 'semaphores', 'listing', 'gc'],
  },
  {
    name: 'guarded-writes.json with locking.json',
    grants: () => union(locking(), policyFile('guarded-writes.json')),
    features: ['guarded'],
    own: () => policyFile('guarded-writes.json'),
  },
  {
    name: 'fencing.json with locking.json',
    grants: () => union(locking(), policyFile('fencing.json')),
    features: ['fencing', 'fenced-groups'],
    own: () => policyFile('fencing.json'),
  },
  { name: 'create-table.json', grants: () => policyFile('create-table.json'), features: ['create-table'] },
  { name: 'create-fencing-table.json', grants: () => policyFile('create-fencing-table.json'), features: ['create-fencing-table'] },
  { name: 'the CloudFormation policy', grants: () => snippet('yaml'), features: ['locking', 'batched', 'groups'] },
  { name: 'the CDK grant', grants: () => snippet('ts', /locks\.grant\(/), features: ['locking', 'batched', 'groups'] },
  { name: 'the Terraform policy', grants: () => snippet('hcl'), features: ['locking', 'batched', 'groups'] },
];

const featureGrants = (feature: Feature): Grants => recorded.get(feature) ?? new Map<string, Set<string>>();
const flatten = (grants: Grants): string[] =>
  [...grants].flatMap(([table, actions]) => [...actions].map((action) => `${table}: ${action}`)).sort();

describe('the documented IAM grants', () => {
  it('every feature was exercised, and its calls are what the library sends', () => {
    expect(flatten(featureGrants('batched'))).toEqual(
      expect.arrayContaining([`${LOCKS}: dynamodb:PartiQLInsert`, `${LOCKS}: dynamodb:PartiQLUpdate`, `${LOCKS}: dynamodb:DescribeTable`]),
    );
    expect(flatten(featureGrants('guarded'))).toContain(`${LOCKS}: dynamodb:ConditionCheckItem`);
    expect(flatten(featureGrants('semaphores'))).toContain(`${LOCKS}: dynamodb:BatchGetItem`);
    expect(flatten(featureGrants('fencing'))).toEqual(
      expect.arrayContaining([`${FENCING}: dynamodb:GetItem`, `${FENCING}: dynamodb:UpdateItem`]),
    );
    // A group's transaction is authorized item by item: a PutItem for each lock.
    expect(flatten(featureGrants('groups'))).toEqual(
      expect.arrayContaining([`${LOCKS}: dynamodb:GetItem`, `${LOCKS}: dynamodb:PutItem`, `${LOCKS}: dynamodb:UpdateItem`]),
    );
    expect(flatten(featureGrants('fenced-groups'))).toEqual(
      expect.arrayContaining([`${FENCING}: dynamodb:GetItem`, `${FENCING}: dynamodb:UpdateItem`, `${LOCKS}: dynamodb:PutItem`]),
    );
  });

  it.each(DOCUMENTS)('$name grants every action its features send', ({ grants, features }) => {
    const granted = new Set(flatten(grants()));
    const needed = flatten(union(...features.map(featureGrants)));
    expect(needed.filter((action) => !granted.has(action))).toEqual([]);
  });

  it.each(DOCUMENTS)('$name grants nothing its features do not send', ({ grants, features, own }) => {
    const needed = new Set(flatten(union(...features.map(featureGrants))));
    expect(flatten((own ?? grants)()).filter((action) => !needed.has(action))).toEqual([]);
  });
});
