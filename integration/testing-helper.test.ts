/**
 * dynamodb-lock/testing: the DynamoDB Local users start for their own tests.
 * These start their own servers, beside the one of the test run.
 */
import { describe, expect, it } from '@jest/globals';
import { execFileSync } from 'node:child_process';
import { DescribeTableCommand, DynamoDBClient, ListTablesCommand } from '@aws-sdk/client-dynamodb';
import { LockClient } from '../src/index.js';
import { setTimeout as sleep } from 'node:timers/promises';
import { DynamoDBLocal, startDynamoDBLocal } from '../src/testing/index.js';

/** The command line of the process listening on `port`, from ps. */
function commandLineOf(port: number): string {
  const lines = execFileSync('ps', ['-eo', 'args'], { encoding: 'utf8' }).split('\n');
  return lines.find((line) => line.includes('DynamoDBLocal.jar') && line.includes(` -port ${port}`)) ?? '';
}

/** The DynamoDB Local processes this process started (the test run's own among them), by pid. */
function ownServers(): Set<string> {
  const lines = execFileSync('ps', ['-eo', 'pid=,ppid=,args='], { encoding: 'utf8' }).split('\n');
  const own = lines
    .map((line) => line.trim().split(/\s+/))
    .filter(([, ppid, ...args]) => ppid === String(process.pid) && args.some((arg) => arg.endsWith('/DynamoDBLocal.jar')));
  return new Set(own.map(([pid]) => pid!));
}

describe('startDynamoDBLocal', () => {
  it('starts an in-memory, shared, telemetry-free server on 127.0.0.1 with a ready lock table, and stops it', async () => {
    const ddb = await startDynamoDBLocal({ tableName: 'locks', sortKeyName: 'sortKey' });
    try {
      expect(ddb.endpoint).toBe(`http://127.0.0.1:${ddb.port}`);
      expect(ddb.tableName).toBe('locks');
      const flags = commandLineOf(ddb.port).split(' ');
      expect(flags).toEqual(expect.arrayContaining(['-inMemory', '-sharedDb', '-disableTelemetry']));

      const locks = new LockClient({ dynamoDBConfig: ddb.clientConfig, tableName: 'locks', sortKeyName: 'sortKey' });
      await locks.assertLockTableExists();
      const lock = await locks.acquireLock('job', { sortKey: 'a' });
      expect(lock.state).toBe('held');
      await locks.close();

      // -sharedDb: other credentials and regions see the same table.
      const other = new DynamoDBClient({
        endpoint: ddb.endpoint,
        region: 'eu-west-1',
        credentials: { accessKeyId: 'other', secretAccessKey: 'x' },
      });
      const described = await other.send(new DescribeTableCommand({ TableName: 'locks' }));
      expect(described.Table?.TableStatus).toBe('ACTIVE');
      other.destroy();
    } finally {
      await ddb.stop();
    }
    await ddb.stop(); // twice is fine
    expect(commandLineOf(ddb.port)).toBe('');
    const gone = new DynamoDBClient({ ...ddb.clientConfig, maxAttempts: 1 });
    await expect(gone.send(new ListTablesCommand({}))).rejects.toThrow();
    gone.destroy();
  }, 120_000);

  it('is stopped by await using, and starts without a table when none is asked for', async () => {
    let port: number;
    {
      await using ddb = await startDynamoDBLocal();
      port = ddb.port;
      expect(ddb.tableName).toBeUndefined();
      const client = new DynamoDBClient(ddb.clientConfig);
      expect((await client.send(new ListTablesCommand({}))).TableNames).toEqual([]);
      client.destroy();
    }
    expect(commandLineOf(port)).toBe('');
  }, 120_000);

  it('stops safely after a failed start, and twice; then says it has not started', async () => {
    const failing = new DynamoDBLocal({ java: '/nonexistent/java', tableName: 'locks' });
    await expect(failing.start()).rejects.toThrow(/could not run java/);
    await expect(failing.stop()).resolves.toBeUndefined();
    await expect(failing.stop()).resolves.toBeUndefined();
    expect(() => failing.endpoint).toThrow('DynamoDB Local has not started');
  });

  it('ends a start still under way when stopped: its start rejects and its java is gone', async () => {
    const before = ownServers();
    const ddb = new DynamoDBLocal({ tableName: 'locks' });
    let settled = false;
    const starting = ddb.start().finally(() => (settled = true));
    starting.catch(() => {}); // awaited below
    let spawned: string | undefined;
    while (spawned === undefined && !settled) {
      spawned = [...ownServers()].find((pid) => !before.has(pid));
      await sleep(20);
    }
    expect(spawned).toMatch(/^\d+$/);
    await ddb.stop();
    await expect(starting).rejects.toThrow('DynamoDB Local was stopped before it was ready');
    expect(ownServers().has(spawned!)).toBe(false);
    expect(() => ddb.port).toThrow('DynamoDB Local has not started');
  }, 60_000);

  it('fails with a clear error, without trying other ports, when java cannot be run', async () => {
    const error = (await startDynamoDBLocal({ java: '/nonexistent/java' }).catch((e: unknown) => e)) as Error;
    expect(error.message).toMatch(/attempt 1 on port \d+: could not run java: spawn \/nonexistent\/java ENOENT/);
    expect(error.message).not.toContain('attempt 2');
  });
});
