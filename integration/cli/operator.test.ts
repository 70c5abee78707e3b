/**
 * The operator commands of the real CLI against DynamoDB Local:
 * create-table, list, get, watch and release --force.
 */
import { afterEach, beforeEach, describe, expect, it } from '@jest/globals';
import { PutItemCommand } from '@aws-sdk/client-dynamodb';
import { randomUUID } from 'node:crypto';
import { localEndpoint, uniqueTableName } from '../../test-kit/aws.js';
import { CliProcess, cliEnvironment, runCli } from '../../test-kit/cli-process.js';
import { FaultProxy, dynamoDBErrorReply, operationOf } from '../../test-kit/fault-proxy.js';
import { putForeignLock } from '../../test-kit/tamper.js';
import { LockTestBed, sleep, waitUntil } from '../../test-kit/test-locks.js';
import { LIVE_LEASE_MS } from '../../test-kit/live-lease.js';

let bed: LockTestBed;
const started: CliProcess[] = [];

beforeEach(async () => {
  bed = new LockTestBed('cli-operator');
  await bed.createTable();
});

afterEach(async () => {
  for (const cli of started.splice(0)) cli.kill();
  await bed.dispose();
});

const connection = (): string[] => ['--endpoint', localEndpoint(), '--table', bed.tableName];

/** The item of a holder that died without releasing (written the way the Java client writes it). */
const putAbandonedLock = (key: string, ownerName: string, leaseMs = 20_000): Promise<string> => putForeignLock(bed, key, ownerName, { leaseMs });

describe('create-table', () => {
  it('creates an on-demand table with a sort key and waits until it is ACTIVE; again only with --if-not-exists', async () => {
    const table = uniqueTableName('cli-create');
    const args = ['create-table', '--endpoint', localEndpoint(), '--table', table, '--sort-key-name', 'sortKey'];
    const created = await runCli([...args, '--json']);
    expect(created.code).toBe(0);
    expect(JSON.parse(created.stdout)).toEqual({
      tableName: table,
      partitionKeyName: 'key',
      sortKeyName: 'sortKey',
      billingMode: 'PAY_PER_REQUEST',
      status: 'ACTIVE',
    });

    const again = await runCli(args);
    expect(again.code).toBe(1);
    expect(again.stderr).toContain('--if-not-exists');
    const accepted = await runCli([...args, '--if-not-exists']);
    expect(accepted.code).toBe(0);
    expect(accepted.stdout).toContain('is ACTIVE');
  });

  it('says in text what it created: the keys and the billing mode, on-demand by default', async () => {
    const table = uniqueTableName('cli-create');
    const created = await runCli(['create-table', '--endpoint', localEndpoint(), '--table', table]);
    expect(created.stderr).toBe('');
    expect(created.code).toBe(0);
    expect(created.stdout).toBe(`Table "${table}" is ACTIVE (partition key "key", on-demand).\n`);
  });
});

describe('list and get', () => {
  it('list --json shows a lock held by the library with its owner, RVN, lease and data (endpoint from AWS_ENDPOINT_URL_DYNAMODB)', async () => {
    // No heartbeat may move the RVN between a CLI run's read and the comparison with lock.recordVersionNumber.
    const holder = bed.client({ ownerName: 'library-holder', backgroundHeartbeats: false });
    const lock = await holder.acquireLock('report', { data: '{"job":"report"}' });
    await putAbandonedLock('abandoned', 'java-host');

    const env = cliEnvironment({ endpointFromEnv: true });
    const listed = await runCli(['list', '--table', bed.tableName, '--json'], { env });
    expect(listed.code).toBe(0);
    const locks = JSON.parse(listed.stdout) as Array<Record<string, unknown>>;
    expect(locks).toContainEqual({
      partitionKey: 'report',
      sortKey: null,
      ownerName: 'library-holder',
      leaseDuration: 20_000,
      recordVersionNumber: lock.recordVersionNumber,
      isReleased: false,
      dataText: '{"job":"report"}',
      dataBase64: Buffer.from('{"job":"report"}').toString('base64'),
    });
    expect(locks.map((l) => l['partitionKey'])).toEqual(['abandoned', 'report']);

    const table = await runCli(['list', '--table', bed.tableName], { env });
    expect(table.code).toBe(0);
    const [header, ...rows] = table.stdout.trim().split('\n');
    expect(header?.split(/\s{2,}/)).toEqual(['KEY', 'OWNER', 'LEASE', 'RVN', 'RELEASED', 'DATA']);
    expect(rows.find((row) => row.startsWith('report'))?.split(/\s{2,}/)).toEqual([
      'report',
      'library-holder',
      '20 s',
      lock.recordVersionNumber,
      'no',
      '{"job":"report"}',
    ]);
  });

  it('get shows the holder, and exits with 3 when nobody holds the lock', async () => {
    const holder = bed.client({ ownerName: 'library-holder', backgroundHeartbeats: false });
    const lock = await holder.acquireLock('report');

    const held = await runCli(['get', ...connection(), 'report', '--json']);
    expect(held.code).toBe(0);
    expect(JSON.parse(held.stdout)).toMatchObject({ ownerName: 'library-holder', recordVersionNumber: lock.recordVersionNumber });
    const free = await runCli(['get', ...connection(), 'nobody-here']);
    expect(free.code).toBe(3);
    expect(free.stdout).toContain('Nobody holds "nobody-here"');
  });
});

describe('a table with a sort key, named by no flag', () => {
  it('list, get and run read the key names from the table; a missing --sort-key is named as the flag', async () => {
    const sorted = new LockTestBed('cli-sorted', { sortKeyName: 'sortKey' });
    try {
      await sorted.createTable();
      const holder = sorted.client({ ownerName: 'sorted-holder' });
      await holder.acquireLock('report', { sortKey: 'eu' });
      const table = ['--endpoint', localEndpoint(), '--table', sorted.tableName];

      const listed = await runCli(['list', ...table]);
      expect(listed.stderr).toBe('');
      expect(listed.code).toBe(0);
      const [header, row] = listed.stdout.trim().split('\n');
      expect(header?.split(/\s{2,}/).slice(0, 3)).toEqual(['KEY', 'SORT KEY', 'OWNER']);
      expect(row?.split(/\s{2,}/).slice(0, 3)).toEqual(['report', 'eu', 'sorted-holder']);

      const got = await runCli(['get', ...table, 'report', '--sort-key', 'eu', '--json']);
      expect(got.code).toBe(0);
      expect(JSON.parse(got.stdout)).toMatchObject({ partitionKey: 'report', sortKey: 'eu', ownerName: 'sorted-holder' });

      const unsorted = await runCli(['run', ...table, 'report', '--', 'true']);
      expect(unsorted.code).toBe(2);
      expect(unsorted.stderr).toContain('"sortKey"');
      expect(unsorted.stderr).toContain('pass --sort-key VALUE');
      expect(unsorted.stderr).not.toContain('options.');
    } finally {
      await sorted.dispose();
    }
  });

  it('--sort-key on a table without a sort key is refused, naming the flag', async () => {
    const result = await runCli(['get', ...connection(), 'report', '--sort-key', 'eu']);
    expect(result.code).toBe(2);
    expect(result.stderr).toContain('has no sort key');
    expect(result.stderr).toContain('--sort-key');
  });
});

describe('watch', () => {
  it('prints each change of holder and RVN as JSON lines, and exits with 0 on SIGINT', async () => {
    const watcher = new CliProcess(['watch', ...connection(), '--json', '--interval', '100ms', 'watched']);
    started.push(watcher);
    const events = (): Array<{ event: string; lock: { ownerName: string; recordVersionNumber: string } | null }> =>
      watcher.stdout
        .trim()
        .split('\n')
        .filter(Boolean)
        .map((line) => JSON.parse(line) as never);
    await waitUntil('the first read', () => events().length === 1, { timeoutMs: 30_000 });
    expect(events()[0]).toMatchObject({ event: 'free', lock: null });

    // Its heartbeats are the subject; the lease is long enough that a stalled worker shows no 'stale' line.
    const holder = bed.client({ ownerName: 'watched-holder', leaseDuration: LIVE_LEASE_MS, heartbeatPeriod: 250 });
    const lock = await holder.acquireLock('watched');
    await waitUntil('a heartbeat seen', () => events().some((e) => e.event === 'heartbeat'));
    await lock.release();
    await waitUntil('the release seen', () => events()[events().length - 1]?.event === 'free');
    watcher.child.kill('SIGINT');
    const result = await watcher.exited;

    expect(result.code).toBe(0);
    const seen = events();
    expect(seen[1]).toMatchObject({ event: 'acquired', lock: { ownerName: 'watched-holder' } });
    const rvns = seen.filter((e) => e.lock !== null).map((e) => e.lock?.recordVersionNumber);
    expect(new Set(rvns).size).toBe(rvns.length); // one line per RVN, none repeated
  });

  it("does not call a holder stale before its lease has passed, for a lease longer than Node's timers take (30 days, as Java allows)", async () => {
    const thirtyDays = 30 * 24 * 3_600_000;
    await putAbandonedLock('long-lease', 'java-host', thirtyDays);
    const watcher = new CliProcess(['watch', ...connection(), '--json', '--interval', '100ms', 'long-lease']);
    started.push(watcher);
    const events = (): string[] =>
      watcher.stdout
        .split('\n')
        .filter(Boolean)
        .map((line) => (JSON.parse(line) as { event: string }).event);
    await waitUntil('the first read', () => events().length > 0, { timeoutMs: 30_000 });
    await sleep(500); // five reads of the same RVN
    await putAbandonedLock('long-lease', 'java-host', thirtyDays); // its heartbeat: a new RVN
    await waitUntil('the heartbeat seen', () => events().includes('heartbeat'));
    watcher.child.kill('SIGINT');
    expect((await watcher.exited).code).toBe(0);

    expect(events()).toEqual(['held', 'heartbeat']);
  });

  it('says, in text for people, when an RVN stood still for its whole lease: the holder stopped heartbeating', async () => {
    const rvn = await putAbandonedLock('abandoned', 'dead-host', 1_000);
    const watcher = new CliProcess(['watch', ...connection(), '--interval', '100ms', 'abandoned']);
    started.push(watcher);
    await waitUntil('the stale line', () => watcher.stdout.includes('stale'), { timeoutMs: 30_000 });
    watcher.child.kill('SIGTERM');
    expect((await watcher.exited).code).toBe(0);

    const [held, stale] = watcher.stdout.trim().split('\n');
    expect(held).toMatch(new RegExp(`^\\S+Z  held       owner dead-host  rvn ${rvn}  lease 1 s$`));
    expect(stale).toContain(`rvn ${rvn} unchanged for its lease (1 s): dead-host stopped heartbeating`);
  });
});

describe('release --force', () => {
  it('waits until the RVN of the lock stood still for its whole lease, saying so, then deletes it', async () => {
    const rvn = await putAbandonedLock('stuck', 'dead-host', 1_500);
    const result = await runCli(['release', ...connection(), 'stuck', '--force', '--yes', '--json']);
    expect(result.stderr).toContain(`until RVN ${rvn} has stood still for its lease (1.5 s)`);
    expect(result.code).toBe(0);
    expect(JSON.parse(result.stdout)).toMatchObject({ released: true, lock: { ownerName: 'dead-host', recordVersionNumber: rvn } });
    expect(await bed.item('stuck')).toBeUndefined();
    const again = await runCli(['release', ...connection(), 'stuck', '--force', '--yes']);
    expect(again.code).toBe(3);
  });

  it('never takes the lock of a live holder (exit 77): its heartbeats move the RVN while release watches', async () => {
    const holder = bed.client({ ownerName: 'live-holder', leaseDuration: LIVE_LEASE_MS, heartbeatPeriod: 375 });
    const lock = await holder.acquireLock('alive');

    const result = await runCli(['release', ...connection(), 'alive', '--force', '--yes']);
    expect(result.stdout).toContain('its holder is alive');
    expect(result.code).toBe(77);
    expect(await bed.owner('alive')).toBe('live-holder');
    expect(lock.state).toBe('held');
    expect(lock.signal.aborted).toBe(false);
  });

  it('--now deletes at once, without waiting out the lease, for an operator who knows the holder is gone', async () => {
    const rvn = await putAbandonedLock('stuck', 'dead-host', 3_600_000);
    const result = await runCli(['release', ...connection(), 'stuck', '--force', '--yes', '--now', '--json']);
    expect(result.stderr).not.toContain('stood still');
    expect(result.code).toBe(0);
    expect(JSON.parse(result.stdout)).toMatchObject({ released: true, lock: { recordVersionNumber: rvn } });
    expect(await bed.item('stuck')).toBeUndefined();
  });

  describe('a delete applied whose reply was lost, retried by the SDK', () => {
    /** Runs `release --force --now --json` through a proxy that drops the first DeleteItem's reply after applying it; `meanwhile` runs then. */
    async function releaseLosingReply(
      key: string,
      meanwhile: () => Promise<unknown>,
    ): Promise<{ code: number | null; report: Record<string, unknown> }> {
      const proxy = await FaultProxy.start(localEndpoint());
      try {
        const lost = proxy.loseReplyThenRetries((request) => operationOf(request) === 'DeleteItem', { action: 'forward', delayMs: 1_500 });
        const next = lost.then(meanwhile);
        const result = await runCli([
          'release',
          '--endpoint',
          proxy.endpoint,
          '--table',
          bed.tableName,
          key,
          '--force',
          '--yes',
          '--now',
          '--json',
        ]);
        await next;
        expect(proxy.exchanges.filter((exchange) => operationOf(exchange.request) === 'DeleteItem')).toHaveLength(2);
        return { code: result.code, report: JSON.parse(result.stdout) as Record<string, unknown> };
      } finally {
        await proxy.close();
      }
    }

    it('the retry finds the item gone: released (exit 0), not "nobody holds it"', async () => {
      const rvn = await putAbandonedLock('stuck', 'dead-host', 3_600_000);
      const { code, report } = await releaseLosingReply('stuck', async () => undefined);
      expect(code).toBe(0);
      expect(report).toMatchObject({ released: true, lock: { recordVersionNumber: rvn } });
      expect(await bed.item('stuck')).toBeUndefined();
    });

    it('the retry finds an item that is not a valid lock: not called released (the key is still blocked)', async () => {
      await putAbandonedLock('stuck', 'dead-host', 3_600_000);
      const malformed = async (): Promise<unknown> =>
        bed.raw.send(new PutItemCommand({ TableName: bed.tableName, Item: { ...bed.key('stuck'), ownerName: { S: 'someone' } } }));
      const { code, report } = await releaseLosingReply('stuck', malformed);
      expect(code).toBe(1);
      expect(report).toMatchObject({ released: false });
      expect(await bed.owner('stuck')).toBe('someone');
    });

    it('another client took the freed lock before the retry: not called a refusal (77), and its lock is left alone', async () => {
      await putAbandonedLock('stuck', 'dead-host', 3_600_000);
      let newRvn: string | undefined;
      const { code, report } = await releaseLosingReply('stuck', async () => (newRvn = await putAbandonedLock('stuck', 'new-holder')));
      expect(code).not.toBe(77);
      expect(code).not.toBe(0);
      expect(report).toMatchObject({ released: false, current: { ownerName: 'new-holder', recordVersionNumber: newRvn } });
      expect(await bed.owner('stuck')).toBe('new-holder');
    });
  });

  it('--now whose first delete was throttled (answered, nothing deleted) while the holder lives: refused (exit 77)', async () => {
    const holder = bed.client({ ownerName: 'live-holder', leaseDuration: LIVE_LEASE_MS, heartbeatPeriod: 375 });
    const lock = await holder.acquireLock('alive');
    const proxy = await FaultProxy.start(localEndpoint());
    try {
      let deletes = 0;
      // The retry leaves after the holder's next heartbeat has moved the RVN the release read.
      proxy.setRule((request) => {
        if (operationOf(request) !== 'DeleteItem') return { action: 'forward' };
        return deletes++ === 0 ? { action: 'respond', reply: dynamoDBErrorReply('ThrottlingException') } : { action: 'forward', delayMs: 1_000 };
      });
      const result = await runCli(['release', '--endpoint', proxy.endpoint, '--table', bed.tableName, 'alive', '--force', '--yes', '--now']);
      expect(deletes).toBeGreaterThanOrEqual(2);
      expect(result.stdout).toContain('its holder is alive');
      expect(result.stdout).not.toContain('got no answer');
      expect(result.code).toBe(77);
    } finally {
      await proxy.close();
    }
    expect(await bed.owner('alive')).toBe('live-holder');
    expect(lock.state).toBe('held');
  });

  it('refuses (exit 77) when the RVN is not the one given with --rvn, and the holder keeps its lock', async () => {
    const holder = bed.client({ ownerName: 'live-holder', leaseDuration: LIVE_LEASE_MS, heartbeatPeriod: 375 });
    const lock = await holder.acquireLock('alive');
    const readRvn = lock.recordVersionNumber;
    await waitUntil('a heartbeat moved the RVN', async () => (await bed.rvn('alive')) !== readRvn);

    const result = await runCli(['release', ...connection(), 'alive', '--force', '--yes', '--now', '--rvn', readRvn]);
    expect(result.code).toBe(77);
    expect(result.stdout).toContain('moved on');
    expect(await bed.owner('alive')).toBe('live-holder');
    expect(lock.state).toBe('held');
  });

  it('clears a malformed item, which acquiring refuses, after the same confirmation', async () => {
    await bed.raw.send(
      new PutItemCommand({
        TableName: bed.tableName,
        Item: { key: { S: 'broken' }, ownerName: { S: 'someone' }, leaseDuration: { S: 'soon' }, recordVersionNumber: { S: randomUUID() } },
      }),
    );
    const refused = await runCli(['run', ...connection(), 'broken', '--', 'true']);
    expect(refused.code).toBe(1);
    expect(refused.stderr).toContain('Malformed lock item');
    const unconfirmed = await runCli(['release', ...connection(), 'broken', '--force']);
    expect(unconfirmed.code).toBe(2);

    const result = await runCli(['release', ...connection(), 'broken', '--force', '--yes']);
    expect(result.stderr).toContain('leaseDuration');
    expect(result.code).toBe(0);
    expect(result.stdout).toContain('Released the malformed item "broken"');
    expect(await bed.item('broken')).toBeUndefined();
  });

  it.each([
    ['y', 0, 'Released "stuck"', undefined],
    ['n', 1, 'Not released.', 'dead-host'],
  ])('at a terminal, answering %j to its question exits with %d', async (answer, code, said, owner) => {
    await putAbandonedLock('stuck', 'dead-host', 1_500);
    const operator = new CliProcess(['release', ...connection(), 'stuck', '--force'], { terminal: true });
    started.push(operator);
    await waitUntil('the question', () => operator.stdout.includes('[y/N] '), { timeoutMs: 30_000 });
    operator.type(`${answer}\n`);
    const result = await operator.exited;

    expect(result.stdout).toContain(said);
    expect(result.code).toBe(code);
    expect(await bed.owner('stuck')).toBe(owner);
  });

  it('at a terminal, asks before it clears a malformed item', async () => {
    await bed.raw.send(
      new PutItemCommand({
        TableName: bed.tableName,
        Item: { key: { S: 'broken' }, ownerName: { S: 'someone' }, leaseDuration: { N: '20000' } },
      }),
    );
    const operator = new CliProcess(['release', ...connection(), 'broken', '--force'], { terminal: true });
    started.push(operator);
    await waitUntil('the question', () => operator.stdout.includes('[y/N] '), { timeoutMs: 30_000 });
    expect(operator.stdout).toContain('leaseDuration  {"N":"20000"}');
    operator.type('yes\n');
    const result = await operator.exited;

    expect(result.code).toBe(0);
    expect(result.stdout).toContain('Released the malformed item "broken"');
    expect(await bed.item('broken')).toBeUndefined();
  });

  it('asks before it deletes; without a terminal it wants --yes, and without --force it refuses', async () => {
    await putAbandonedLock('stuck', 'dead-host');
    const unconfirmed = await runCli(['release', ...connection(), 'stuck', '--force']);
    expect(unconfirmed.code).toBe(2);
    expect(unconfirmed.stderr).toContain('--yes');
    const unforced = await runCli(['release', ...connection(), 'stuck', '--yes']);
    expect(unforced.code).toBe(2);
    expect(unforced.stderr).toContain('--force');
    expect(await bed.owner('stuck')).toBe('dead-host');
  });
});
