/**
 * The error classes: names (after the Java exceptions), the hierarchy,
 * `cause`, messages that name the lock and its holder, and `is…` guards that
 * work across two copies of the package.
 */
import { describe, expect, it } from '@jest/globals';
import * as errors from '../../src/base/errors.js';
import * as api from '../../src/index.js';
import {
  DynamoDBLockError,
  DynamoDBTimeoutError,
  DynamoDBUnavailableError,
  DynamoDBTooSlowError,
  InvalidArgumentError,
  isDynamoDBUnavailableError,
  isLockCurrentlyUnavailableError,
  isLockNotGrantedError,
  LockClientCloseError,
  LockClientClosedError,
  LockCurrentlyUnavailableError,
  LockHandOffError,
  LockLostError,
  LockNotGrantedError,
  LockTableAlreadyExistsError,
  LockTableDoesNotExistError,
  LockTableSchemaMismatchError,
  MalformedLockItemError,
  SessionMonitorNotSetError,
  type LockHolder,
} from '../../src/base/errors.js';

const lock = { partitionKey: 'orders', sortKey: 'eu-1' };
const holder: LockHolder = { ownerName: 'host-a1b2', recordVersionNumber: 'rvn-123', leaseDuration: 20_000, isReleased: false };
const cause = new Error('underlying');

/** One instance of every class, each built with a cause where the constructor takes one. */
const samples: ReadonlyArray<readonly [string, DynamoDBLockError]> = [
  ['DynamoDBLockError', new DynamoDBLockError('base', { cause })],
  ['LockNotGrantedError', new LockNotGrantedError('timed out', lock, holder, { cause })],
  ['DynamoDBUnavailableError', new DynamoDBUnavailableError(lock, cause)],
  ['DynamoDBTooSlowError', new DynamoDBTooSlowError(lock, 1_234, 1_000)],
  ['DynamoDBTimeoutError', new DynamoDBTimeoutError('getLock("orders"/"eu-1")', 20_000, cause)],
  ['LockCurrentlyUnavailableError', new LockCurrentlyUnavailableError(lock, holder, { cause })],
  ['LockLostError', new LockLostError('taken', 'heartbeat refused', lock, { cause, holder })],
  ['LockTableDoesNotExistError', new LockTableDoesNotExistError('locks', { cause })],
  ['LockTableAlreadyExistsError', new LockTableAlreadyExistsError('locks', { cause })],
  [
    'LockTableSchemaMismatchError',
    new LockTableSchemaMismatchError('locks', 'The client has no sortKeyName, but lock table "locks" has sort key "id"', { cause }),
  ],
  ['SessionMonitorNotSetError', new SessionMonitorNotSetError('no monitor', { cause })],
  ['MalformedLockItemError', new MalformedLockItemError('leaseDuration', 'is not a number', lock)],
  ['InvalidArgumentError', new InvalidArgumentError('EMPTY_KEY', 'empty')],
  ['LockClientClosedError', new LockClientClosedError()],
  ['LockClientCloseError', new LockClientCloseError([cause, new Error('second')])],
  ['LockHandOffError', new LockHandOffError('MOVED_ON', 'the lock moved on', { cause, holder })],
];

describe('error classes', () => {
  it('covers every exported class', () => {
    const exported = Object.entries(errors)
      .filter(([, value]) => typeof value === 'function' && (value === DynamoDBLockError || value.prototype instanceof DynamoDBLockError))
      .map(([name]) => name)
      .sort();
    expect(samples.map(([name]) => name).sort()).toEqual(exported);
  });

  it.each(samples)('%s has its own name, is a DynamoDBLockError and an Error', (name, error) => {
    expect(error.name).toBe(name);
    expect(error).toBeInstanceOf(DynamoDBLockError);
    expect(error).toBeInstanceOf(Error);
    expect(error.constructor.name).toBe(name);
    expect(String(error)).toBe(`${name}: ${error.message}`);
    expect(error.stack?.split('\n')[0]).toBe(`${name}: ${error.message}`);
    expect(error.message.length).toBeGreaterThan(0);
  });

  it.each(
    samples.filter(
      ([name]) => !['MalformedLockItemError', 'InvalidArgumentError', 'LockClientClosedError', 'DynamoDBTooSlowError'].includes(name),
    ),
  )('%s keeps its cause', (_name, error) => {
    expect(error.cause).toBe(cause);
  });

  it('leaves cause undefined when none is given', () => {
    expect(new LockLostError('deleted', 'r', lock).cause).toBeUndefined();
    expect(new LockNotGrantedError('r', lock).cause).toBeUndefined();
    expect('cause' in new LockLostError('deleted', 'r', lock)).toBe(false);
  });

  it('DynamoDBUnavailableError is a LockNotGrantedError (Java throws that), told apart by its class', () => {
    const unavailable = new DynamoDBUnavailableError(lock, Object.assign(new Error('connect ECONNREFUSED'), { code: 'ECONNREFUSED' }));
    expect(unavailable).toBeInstanceOf(LockNotGrantedError);
    expect(isLockNotGrantedError(unavailable)).toBe(true);
    expect(isDynamoDBUnavailableError(unavailable)).toBe(true);
    expect(isDynamoDBUnavailableError(new LockNotGrantedError('r', lock))).toBe(false);
    expect(unavailable.message).toMatch(/DynamoDB did not answer successfully \(Error: ECONNREFUSED: connect ECONNREFUSED\)/);
  });

  it('DynamoDBTooSlowError is a DynamoDBUnavailableError that says the round trip against the heartbeat period', () => {
    const slow = new DynamoDBTooSlowError(lock, 1_234.4, 1_000);
    expect(isDynamoDBUnavailableError(slow)).toBe(true);
    expect(isLockNotGrantedError(slow)).toBe(true);
    expect(slow).toMatchObject({ roundTripMs: 1_234.4, heartbeatPeriodMs: 1_000, partitionKey: 'orders' });
    expect(slow.message).toContain('answered in 1234 ms, longer than the heartbeat period (1000 ms)');
    expect(slow.message).not.toContain('did not answer successfully');
  });

  it('LockCurrentlyUnavailableError is not a LockNotGrantedError (as in Java)', () => {
    const unavailable = new LockCurrentlyUnavailableError(lock);
    expect(unavailable).not.toBeInstanceOf(LockNotGrantedError);
    expect(isLockNotGrantedError(unavailable)).toBe(false);
    expect(isLockCurrentlyUnavailableError(new LockNotGrantedError('r', lock))).toBe(false);
  });
});

describe('error messages and fields', () => {
  it('LockNotGrantedError names the lock, the reason and the holder (owner, RVN, lease)', () => {
    const error = new LockNotGrantedError('no luck after 21000 ms', lock, holder);
    expect(error.message).toContain('"orders"');
    expect(error.message).toContain('"eu-1"');
    expect(error.message).toContain('no luck after 21000 ms');
    expect(error.message).toContain('host-a1b2');
    expect(error.message).toContain('rvn-123');
    expect(error.message).toContain('20000');
    expect(error.partitionKey).toBe('orders');
    expect(error.sortKey).toBe('eu-1');
    expect(error.holder).toBe(holder);
  });

  it('LockNotGrantedError without a holder or sort key still names the lock', () => {
    const error = new LockNotGrantedError('Lock does not exist.', { partitionKey: 'solo' });
    expect(error.message).toContain('"solo"');
    expect(error.message).toContain('Lock does not exist.');
    expect(error.message).not.toContain('held by');
    expect(error.sortKey).toBeUndefined();
    expect(error.holder).toBeUndefined();
  });

  it('a released holder is described as released, not as holding', () => {
    const error = new LockNotGrantedError('r', lock, { ...holder, isReleased: true });
    expect(error.message).toContain('released');
    expect(error.message).toContain('host-a1b2');
    expect(error.message).not.toContain('held by');
  });

  it('LockCurrentlyUnavailableError names the lock and the holder', () => {
    const error = new LockCurrentlyUnavailableError(lock, holder);
    for (const part of ['"orders"', '"eu-1"', 'host-a1b2', 'rvn-123', '20000']) expect(error.message).toContain(part);
    expect(error.partitionKey).toBe('orders');
    expect(error.sortKey).toBe('eu-1');
    expect(error.holder).toEqual(holder);
  });

  it('quotes keys so that odd keys stay unambiguous', () => {
    const a = new LockLostError('deleted', 'r', { partitionKey: 'a/b' });
    const b = new LockLostError('deleted', 'r', { partitionKey: 'a', sortKey: 'b' });
    expect(a.message).not.toBe(b.message);
    expect(new LockLostError('deleted', 'r', { partitionKey: 'x"y' }).message).toContain(JSON.stringify('x"y'));
  });

  it('LockLostError names the lock and the reason', () => {
    const error = new LockLostError('taken', 'its heartbeat was refused', lock);
    expect(error.message).toContain('"orders"');
    expect(error.message).toContain('"eu-1"');
    expect(error.message).toContain('its heartbeat was refused');
    expect(error.partitionKey).toBe('orders');
    expect(error.sortKey).toBe('eu-1');
    expect(error.kind).toBe('taken');
    expect(error.holder).toBeUndefined();
  });

  it('LockLostError names the new holder when it is known', () => {
    const error = new LockLostError('taken', 'another client holds it', lock, { holder });
    expect(error.holder).toEqual(holder);
    expect(error.message).toContain(holder.ownerName);
    expect(error.message).toContain(holder.recordVersionNumber);
  });

  it('table errors name the table; the schema mismatch says what does not match', () => {
    const missing = new LockTableDoesNotExistError('my-locks');
    expect(missing.message).toContain('my-locks');
    expect(missing.tableName).toBe('my-locks');
    const said = 'The client\'s sortKeyName "sk" does not match lock table "my-locks", which has no sort key';
    const mismatch = new LockTableSchemaMismatchError('my-locks', said);
    expect(mismatch.message).toBe(said);
    expect(mismatch.tableName).toBe('my-locks');
  });

  it('MalformedLockItemError names the attribute, the problem and the lock', () => {
    const error = new MalformedLockItemError('recordVersionNumber', 'is missing', lock);
    expect(error.attribute).toBe('recordVersionNumber');
    expect(error.message).toContain('recordVersionNumber');
    expect(error.message).toContain('is missing');
    expect(error.message).toContain('"orders"');
    expect(new MalformedLockItemError('data', 'is not binary').message).toContain('data');
  });

  it('InvalidArgumentError carries its code', () => {
    const error = new InvalidArgumentError('LEASE_TOO_SHORT', 'too short');
    expect(error.code).toBe('LEASE_TOO_SHORT');
    expect(error.message).toBe('too short');
  });

  it('LockClientCloseError keeps every failure and uses the first as cause', () => {
    const second = new Error('second');
    const error = new LockClientCloseError([cause, second]);
    expect(error.errors).toEqual([cause, second]);
    expect(error.cause).toBe(cause);
    expect(error.message).toContain('2');
  });
});

describe('is… guards', () => {
  const key = { partitionKey: 'k' };
  /** One instance of every class the package exports, and its guard. */
  const guarded: ReadonlyArray<readonly [string, (e: unknown) => boolean, Error]> = [
    ...samples.map(([name, error]) => [name, (api as Record<string, unknown>)[`is${name}`] as (e: unknown) => boolean, error] as const),
    ['GuardedWriteCanceledError', api.isGuardedWriteCanceledError, new api.GuardedWriteCanceledError(key, [], 'TransactionConflict')],
    ['GuardedWriteOutcomeUnknownError', api.isGuardedWriteOutcomeUnknownError, new api.GuardedWriteOutcomeUnknownError(key, cause)],
    ['AlreadyCampaigningError', api.isAlreadyCampaigningError, new api.AlreadyCampaigningError(key, 'it already leads')],
    ['LockTableReplicationError', api.isLockTableReplicationError, new api.LockTableReplicationError('EVENTUAL_CONSISTENCY', 'locks')],
    ['SemaphorePermitsMismatchError', api.isSemaphorePermitsMismatchError, new api.SemaphorePermitsMismatchError(3, key, 5)],
  ];
  const byName = guarded.filter(([name]) => name !== 'DynamoDBLockError');

  it('there is one for every error class the package exports', () => {
    const classes = Object.entries(api)
      .filter(([, value]) => typeof value === 'function' && value.prototype instanceof Error)
      .map(([name]) => name);
    expect(classes.filter((name) => typeof (api as Record<string, unknown>)[`is${name}`] !== 'function')).toEqual([]);
    expect([...guarded.map(([name]) => name), 'StatementFailedError'].sort()).toEqual(classes.sort());
  });

  it.each(guarded)('is%s accepts its own instances', (_name, guard, instance) => {
    expect(guard(instance)).toBe(true);
  });

  it.each(guarded)('is%s accepts an error of that name from another copy of the package', (name, guard) => {
    // What a second copy of this package would throw: a different class, same name.
    class Foreign extends Error {
      override name = name;
    }
    expect(guard(new Foreign('from elsewhere'))).toBe(true);
    const plain = new Error('plain');
    plain.name = name;
    expect(guard(plain)).toBe(true);
    expect(plain).not.toBeInstanceOf(DynamoDBLockError); // so instanceof alone would have failed
  });

  it.each(byName)('is%s refuses other classes, save its subclasses, and non-errors', (name, guard, instance) => {
    for (const [, , other] of guarded) {
      if (!(other instanceof instance.constructor)) expect(guard(other)).toBe(false);
    }
    expect(guard(new Error(name))).toBe(false); // the name in the message does not count
    expect(guard({ name, message: 'duck' })).toBe(false);
    expect(guard(name)).toBe(false);
    expect(guard(undefined)).toBe(false);
    expect(guard(null)).toBe(false);
  });

  it('isDynamoDBLockError accepts every error of the library, and no other', () => {
    for (const [, , error] of guarded) expect(api.isDynamoDBLockError(error)).toBe(true);
    expect(api.isDynamoDBLockError(new Error('plain'))).toBe(false);
    expect(api.isDynamoDBLockError(new TypeError('DynamoDBLockError'))).toBe(false);
    expect(api.isDynamoDBLockError(new api.StatementFailedError('ThrottlingError', undefined, undefined, 1))).toBe(false);
    expect(api.isDynamoDBLockError({ name: 'LockLostError', message: 'duck' })).toBe(false);
  });

  it("isStatementFailedError goes by a mark every copy of the package shares, since its name is the SDK exception's", () => {
    const failed = new api.StatementFailedError('ThrottlingError', undefined, undefined, 1);
    expect(failed.name).toBe('ThrottlingException');
    expect(api.isStatementFailedError(failed)).toBe(true);
    class Foreign extends Error {
      get [Symbol.for('dynamodb-lock.StatementFailedError')](): true {
        return true;
      }
    }
    expect(api.isStatementFailedError(new Foreign('ThrottlingException'))).toBe(true);
    expect(api.isStatementFailedError(Object.assign(new Error('throttled'), { name: 'ThrottlingException', code: 'ThrottlingError' }))).toBe(
      false,
    );
    expect(Object.getOwnPropertySymbols(failed)).toEqual([]);
  });
});
