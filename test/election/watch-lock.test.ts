import { describe, expect, it } from '@jest/globals';
import { InvalidArgumentError, LockTableDoesNotExistError, watchLock } from '../../src/index.js';
import { scripted } from './scripted-client.js';

const serviceError = (name: string, status: number): Error => Object.assign(new Error(name), { name, $metadata: { httpStatusCode: status } });

describe('watchLock', () => {
  it('yields the first read, then only reads that differ in holder or RVN; retries throttling', async () => {
    const { client } = scripted([
      undefined,
      undefined,
      { owner: 'a', rvn: '1' },
      { owner: 'a', rvn: '1' },
      serviceError('ThrottlingException', 400),
      { owner: 'a', rvn: '2' },
      { owner: 'b', rvn: '3' },
      undefined,
    ]);
    const stop = new AbortController();
    const seen: Array<string | undefined> = [];
    for await (const lock of watchLock(client, 'k', { pollInterval: 1, signal: stop.signal })) {
      seen.push(lock === undefined ? undefined : `${lock.ownerName}@${lock.recordVersionNumber}`);
      if (seen.length === 5) stop.abort();
    }
    expect(seen).toEqual([undefined, 'a@1', 'a@2', 'b@3', undefined]);
  });

  it('ends by throwing on an error that is not transient', async () => {
    const { client } = scripted([{ owner: 'a', rvn: '1' }, serviceError('ResourceNotFoundException', 400)]);
    const seen: unknown[] = [];
    const watching = (async () => {
      for await (const lock of watchLock(client, 'k', { pollInterval: 1 })) seen.push(lock);
    })();
    await expect(watching).rejects.toBeInstanceOf(LockTableDoesNotExistError);
    expect(seen).toHaveLength(1);
  });

  it('ends without reading when its signal has aborted, and refuses a bad pollInterval at the call', async () => {
    const { client, calls } = scripted([{ owner: 'a', rvn: '1' }]);
    const stop = new AbortController();
    stop.abort();
    for await (const _ of watchLock(client, 'k', { signal: stop.signal })) throw new Error('nothing should be yielded');
    expect(calls()).toBe(0);
    expect(() => watchLock(client, 'k', { pollInterval: 0 })).toThrow(InvalidArgumentError);
  });
});
