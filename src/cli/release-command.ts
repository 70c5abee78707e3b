/**
 * `dynamodb-lock release KEY --force`: the operator's override for a stuck
 * lock. The delete is conditioned on the owner and RVN just read (Java's own
 * release condition), so it never clears a lock that moved on in between: a
 * holder that still heartbeats, or a new holder.
 */
import { isConditionalCheckFailed, itemOfFailedCondition } from '../dynamodb-errors.js';
import { explainTableError } from '../lock-table.js';
import { LockSnapshot } from '../lock.js';
import { buildReleaseRequest, decodeLockItem, withOldItemOnConditionFailure } from '../protocol/index.js';
import { sendWrite } from '../send-write.js';
import type { Command } from './command.js';
import { confirm } from './confirm.js';
import { formatDuration } from './durations.js';
import { ExitCode } from './exit-codes.js';
import { describeKey, lockJson, previewData } from './lock-format.js';
import { renderFields } from './text-table.js';
import { UsageError } from './usage-error.js';

export const releaseCommand: Command = {
  name: 'release',
  synopsis: 'KEY --force [--yes] [--rvn RVN] [--sort-key VALUE]',
  summary: 'clear a stuck lock (operator override)',
  description:
    "Deletes a lock someone else holds: for a lock whose holder died or hangs, so that nobody has to\n" +
    'wait out its lease. It reads the lock, shows it, asks for confirmation (unless --yes), and deletes\n' +
    'it only if it still has the owner and record version number (RVN) it read, or the RVN given with\n' +
    '--rvn. A holder that is still alive writes a new RVN with every heartbeat, so the release refuses\n' +
    '(exit 77) rather than take a lock from a live holder; that holder would also learn of it only at\n' +
    'its next heartbeat. Without a terminal, --yes is required.',
  flags: ['sort-key', 'force', 'yes', 'rvn', 'json'],
  arguments: { min: 1, max: 1, names: 'KEY' },
  exitCodes: [
    ['1', 'error (DynamoDB unreachable, table missing, …), or the confirmation was declined'],
    ['3', 'nobody holds the lock'],
    ['77', 'refused: the lock changed (new RVN or holder) since it was read, or differs from --rvn'],
  ],
  examples: [
    'dynamodb-lock release --table locks nightly-report --force',
    'dynamodb-lock release --table locks nightly-report --force --yes --rvn 0b7c3f1e-…',
  ],
  async run({ flags, io, positionals, connect, interrupted }) {
    if (!flags.boolean('force')) {
      throw new UsageError('release takes a lock away from whoever holds it: pass --force to say you mean that', 'release');
    }
    const partitionKey = positionals[0] as string;
    const sortKey = flags.string('sort-key');
    const expectedRvn = flags.string('rvn');
    const json = flags.boolean('json');
    const key = describeKey(partitionKey, sortKey);
    const report = (released: boolean, text: string, lock: LockSnapshot | undefined, current?: LockSnapshot): void => {
      if (json) {
        io.out(`${JSON.stringify({ released, lock: lock === undefined ? null : lockJson(lock), ...(current === undefined ? {} : { current: lockJson(current) }) })}\n`);
      } else {
        io.out(text);
      }
    };
    if (!flags.boolean('yes') && io.stdin.isTTY !== true) {
      throw new UsageError('release asks for confirmation on a terminal; pass --yes to release without asking', 'release');
    }

    const connection = await connect();
    try {
      connection.lockKey(partitionKey, sortKey);
      const { client, dynamoDB, table } = connection;
      const read = await client.getLock(partitionKey, { sortKey, signal: interrupted });
      // A client that has just been made holds nothing: what it reads is someone else's lock.
      const lock = read as LockSnapshot | undefined;
      if (lock === undefined) {
        report(false, `Nobody holds ${key}; nothing to release.\n`, undefined);
        return ExitCode.noSuchLock;
      }
      if (expectedRvn !== undefined && expectedRvn !== lock.recordVersionNumber) {
        report(false, `Not released: ${key} has RVN ${lock.recordVersionNumber} (owner ${lock.ownerName}), not ${expectedRvn}: it moved on.\n`, lock);
        return ExitCode.lockChanged;
      }
      if (!flags.boolean('yes')) {
        io.err(
          renderFields([
            ['key', key],
            ['owner', lock.ownerName],
            ['lease', formatDuration(lock.leaseDuration)],
            ['rvn', lock.recordVersionNumber],
            ['data', previewData(lock.data)],
          ]),
        );
        if (!(await confirm(io, `Delete this lock, taking it from ${lock.ownerName}?`, interrupted))) {
          report(false, 'Not released.\n', lock);
          return ExitCode.error;
        }
      }
      const request = withOldItemOnConditionFailure(buildReleaseRequest(table, lock, { deleteLock: true }));
      try {
        await sendWrite(dynamoDB, request, interrupted);
      } catch (error) {
        if (!isConditionalCheckFailed(error)) throw await explainTableError(dynamoDB, table, error);
        // The refusal carries the item as it is now (ALL_OLD): no second read needed to say who has it.
        const item = itemOfFailedCondition(error);
        const record = item === undefined || Object.keys(item).length === 0 ? undefined : decodeLockItem(table, item);
        const current = record === undefined || record.isReleased ? undefined : new LockSnapshot(record, performance.now());
        const what = current === undefined ? 'it was released meanwhile' : `it is now held by ${current.ownerName} with RVN ${current.recordVersionNumber}`;
        report(false, `Not released: ${key} changed since it was read (${what}).\n`, lock, current);
        return ExitCode.lockChanged;
      }
      report(true, `Released ${key} (it was held by ${lock.ownerName}, RVN ${lock.recordVersionNumber}).\n`, lock);
      return ExitCode.ok;
    } finally {
      await connection.close();
    }
  },
};
