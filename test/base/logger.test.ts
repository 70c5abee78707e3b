/**
 * The `logger` option: pino and `console` both fit, and the client's own
 * bindings (table, owner) reach every line either way.
 */
import { afterEach, describe, expect, it, jest } from '@jest/globals';
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { Writable } from 'node:stream';
import { pino } from 'pino';
import { LockClient, type Logger } from '../../src/index.js';

// Never called: building the client and closing it without locks sends nothing.
const dynamoDB = new DynamoDBClient({ region: 'us-east-1', endpoint: 'http://127.0.0.1:9' });

/** A client whose construction logs one warning (manual heartbeats with a short lease). */
function clientLoggingTo(logger: Logger): LockClient {
  return new LockClient({
    dynamoDB,
    tableName: 'locks',
    ownerName: 'owner-1',
    backgroundHeartbeats: false,
    leaseDuration: 1_000,
    heartbeatPeriod: 600,
    logger,
  });
}

afterEach(() => {
  jest.restoreAllMocks();
});

describe('logger option', () => {
  it('accepts console, which has no child(), and adds the bindings to each call', async () => {
    const warn = jest.spyOn(console, 'warn').mockImplementation(() => undefined);
    const client = clientLoggingTo(console);
    await client.close();
    expect(warn).toHaveBeenCalledTimes(1);
    const [details, message] = warn.mock.calls[0] as [Record<string, unknown>, string];
    expect(details).toEqual({ lockTable: 'locks', ownerName: 'owner-1' });
    expect(message).toMatch(/leaseDuration is less than twice heartbeatPeriod/);
  });

  it('accepts a pino logger and binds through its child()', async () => {
    const lines: Record<string, unknown>[] = [];
    const sink = new Writable({
      write(chunk: Buffer, _encoding, done) {
        lines.push(JSON.parse(chunk.toString('utf8')) as Record<string, unknown>);
        done();
      },
    });
    const client = clientLoggingTo(pino({ base: { app: 'test' } }, sink));
    await client.close();
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatchObject({ level: 40, app: 'test', lockTable: 'locks', ownerName: 'owner-1' });
    expect(lines[0]?.['msg']).toMatch(/leaseDuration is less than twice heartbeatPeriod/);
  });

  it('accepts any object with debug, warn and error', async () => {
    const seen: string[] = [];
    const logger: Logger = {
      debug: () => undefined,
      warn: (details, message) => seen.push(`${JSON.stringify(details)} ${message}`),
      error: () => undefined,
    };
    await clientLoggingTo(logger).close();
    expect(seen).toEqual([expect.stringContaining('{"lockTable":"locks","ownerName":"owner-1"} leaseDuration')]);
  });
});
