/**
 * Guarded writes from the scoped helpers: a `withLock` routine and a
 * `lead()` routine write through the lock (or leadership) they are given,
 * and a write after a takeover is refused and ends the scope's signal.
 */
import { describe, expect, it } from '@jest/globals';
import { PutItemCommand } from '@aws-sdk/client-dynamodb';
import { LeaderElection, LockLostError } from '../src/index.js';
import { loadJavaScenarios } from '../test-kit/java-fixtures.js';
import { createDataTable, dataItem, increment } from '../test-kit/data-table.js';
import { javaStaleLockTakeover } from '../test-kit/java-items.js';
import { useLockTestBed } from '../test-kit/jest/lock-test-bed-hook.js';
import { rejectionOf } from '../test-kit/test-locks.js';

const bed = useLockTestBed('guarded-scopes');
const scenarios = loadJavaScenarios();
/** The key the recorded Java takeover writes. */
const KEY = 'lock-1';

const counter = async (tableName: string): Promise<string | undefined> => (await dataItem(bed.raw, tableName, 'counter'))?.['n']?.N;
const javaTakesOver = (rvn: string): Promise<unknown> => bed.raw.send(new PutItemCommand(javaStaleLockTakeover(scenarios, bed.tableName, rvn)));
/** No background heartbeats: only the guarded write can find out that the lock moved. */
const quietClient = (ownerName: string) => bed.client({ ownerName, leaseDuration: 20_000, heartbeatPeriod: 5_000, backgroundHeartbeats: false });

describe('guarded writes in scoped routines', () => {
  it('a withLock routine writes through its lock; after a takeover its write is refused, its signal aborts, withLock rejects', async () => {
    const data = await createDataTable(bed.raw, 'scopes-data');
    let routineSignal: AbortSignal | undefined;

    const error = await rejectionOf(
      quietClient('routine').withLock(KEY, async (signal, lock) => {
        routineSignal = signal;
        await lock.transactWrite([increment(data, 'counter')]);
        await javaTakesOver(lock.recordVersionNumber);
        await lock.transactWrite([increment(data, 'counter')]);
        return 'not reached';
      }),
    );

    expect(error).toBeInstanceOf(LockLostError);
    expect(error).toMatchObject({ kind: 'taken', holder: { ownerName: 'owner-B' } });
    expect(routineSignal?.aborted).toBe(true);
    expect(routineSignal?.reason).toBe(error);
    expect(await counter(data)).toBe('1');
    // The release afterwards left the new holder alone.
    expect(await bed.owner(KEY)).toBe('owner-B');
  });

  it('a leader writes through its leadership; a deposed leader’s write is refused and ends its leadership', async () => {
    const data = await createDataTable(bed.raw, 'scopes-data');
    const election = new LeaderElection(quietClient('leader'), KEY, { refreshPeriod: 100 });
    let leadershipSignal: AbortSignal | undefined;

    const error = await rejectionOf(
      election.lead(
        async (signal, leadership) => {
          leadershipSignal = signal;
          await leadership.transactWrite([increment(data, 'counter')]);
          expect(leadership.guardCondition().ConditionCheck?.TableName).toBe(bed.tableName);
          await javaTakesOver(leadership.lock.recordVersionNumber);
          expect(leadership.isLeader).toBe(true); // nothing told it yet
          await leadership.transactWrite([increment(data, 'counter')]);
        },
        { recampaign: false },
      ),
    );

    expect(error).toMatchObject({ name: 'LockLostError', kind: 'taken', holder: { ownerName: 'owner-B' } });
    expect(leadershipSignal?.aborted).toBe(true);
    expect(await counter(data)).toBe('1');
    expect((await election.leader())?.ownerName).toBe('owner-B');
  });
});
