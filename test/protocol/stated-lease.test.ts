/**
 * restateLease finds the lease in every lock write this package builds that
 * states one, in the JSON form DynamoDB receives, and changes nothing else.
 */
import { describe, expect, it } from '@jest/globals';
import {
  buildAcquireRequest,
  buildAdoptionRequest,
  buildFencedAcquisition,
  buildHeartbeatRequest,
  buildReleaseRequest,
  handOffHandle,
  restateLease,
  type LockRecordToWrite,
  type LockTable,
} from '../../src/protocol/index.js';

const table: LockTable = { tableName: 'locks', partitionKeyName: 'key' };
const RVN = 'f47ac10b-58cc-4372-a567-0e02b2c3d479';
const held = { partitionKey: 'job', ownerName: 'owner-A', recordVersionNumber: RVN };
const record: LockRecordToWrite = { ...held, leaseDurationMs: 20_000, data: undefined, additionalAttributes: { note: { S: '20000' } } };

/** The request as DynamoDB receives it: the input serialized to JSON. */
const wire = (input: object): unknown => JSON.parse(JSON.stringify(input));

const fencingTable: LockTable = { tableName: 'fence', partitionKeyName: 'key' };
/** A fenced acquisition's transaction: the lock write and the counter's step, which states no lease. */
const fenced = (request: ReturnType<typeof buildAcquireRequest>): object => ({
  TransactItems: buildFencedAcquisition(fencingTable, { request, key: held, ownerName: 'owner-A', recordVersionNumber: RVN }, 4n).items,
  ClientRequestToken: 'token',
});

const stating: [string, object][] = [
  ['acquire PutItem', buildAcquireRequest(table, record, { kind: 'absent' }).input],
  [
    'acquire UpdateItem',
    buildAcquireRequest(table, record, { kind: 'expired', watchedRecordVersionNumber: RVN }, { updateExistingLockRecord: true }).input,
  ],
  ['heartbeat', buildHeartbeatRequest(table, held, { newRecordVersionNumber: 'rvn-2', leaseDurationMs: 20_000 }).input],
  [
    'adoption',
    buildAdoptionRequest(table, handOffHandle(table, { ...held, leaseDurationMs: 20_000, deleteLockOnRelease: true, fencingToken: undefined }), {
      ownerName: 'owner-B',
      newRecordVersionNumber: 'rvn-3',
      leaseDurationMs: 20_000,
    }),
  ],
  ['a fenced PutItem', fenced(buildAcquireRequest(table, record, { kind: 'absent' }))],
  [
    'a fenced UpdateItem',
    fenced(buildAcquireRequest(table, record, { kind: 'expired', watchedRecordVersionNumber: RVN }, { updateExistingLockRecord: true })),
  ],
];

describe('restateLease', () => {
  it.each(stating)('sets the lease of %s and nothing else', (_name, input) => {
    const request = wire(input);
    expect(restateLease(request, 4_321)).toBe(true);
    const changed = JSON.stringify(request);
    expect(changed.match(/"4321"/g)).toHaveLength(1);
    expect(changed.replace('"4321"', '"20000"')).toBe(JSON.stringify(wire(input)));
  });

  it.each([
    ['release (delete)', buildReleaseRequest(table, held, { deleteLock: true }).input],
    ['release (mark)', buildReleaseRequest(table, held, { deleteLock: false }).input],
    ['not a request', 'PutItem'],
  ])('finds no lease in %s', (_name, input) => {
    const request = wire(input as object);
    expect(restateLease(request, 4_321)).toBe(false);
    expect(request).toEqual(wire(input as object));
  });
});
