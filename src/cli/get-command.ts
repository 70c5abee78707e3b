/** `dynamodb-lock get KEY`: who holds one lock. */
import type { Command } from './command.js';
import { formatDuration } from './durations.js';
import { ExitCode } from './exit-codes.js';
import { describeLockKey } from '../base/lock-key.js';
import { lockJson, previewData } from './lock-format.js';
import { renderFields } from './text-table.js';

export const getCommand: Command = {
  name: 'get',
  synopsis: 'KEY [--sort-key VALUE]',
  summary: 'show who holds a lock',
  description:
    'Reads one lock consistently and shows its owner, lease, record version number (RVN) and data.\n' +
    'Exits with 3 when nobody holds it (no item, or a released one). With --json, prints the lock as\n' +
    'an object, or null.',
  flags: ['sort-key', 'json'],
  arguments: { min: 1, max: 1, names: 'KEY' },
  exitCodes: [['3', 'nobody holds the lock']],
  examples: ['dynamodb-lock get --table locks nightly-report', 'dynamodb-lock get --table locks nightly-report --json | jq -r .ownerName'],
  async run({ flags, io, positionals, connect, interrupted }) {
    const key = positionals[0] as string;
    const sortKey = flags.string('sort-key');
    const connection = await connect();
    try {
      connection.lockKey(key, sortKey);
      const lock = await connection.client.getLock(key, { sortKey, signal: interrupted });
      if (flags.boolean('json')) {
        io.out(`${JSON.stringify(lock === undefined ? null : lockJson(lock), null, 2)}\n`);
      } else if (lock === undefined) {
        io.out(`Nobody holds ${describeLockKey({ partitionKey: key, sortKey })}.\n`);
      } else {
        io.out(
          renderFields([
            ['key', describeLockKey(lock)],
            ['owner', lock.ownerName],
            ['lease', formatDuration(lock.leaseDuration)],
            ['rvn', lock.recordVersionNumber],
            ['data', previewData(lock.data, 200)],
          ]),
        );
      }
      return lock === undefined ? ExitCode.noSuchLock : ExitCode.ok;
    } finally {
      await connection.close();
    }
  },
};
