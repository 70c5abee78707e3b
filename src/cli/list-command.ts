/** `dynamodb-lock list`: every lock in the table, released ones included. */
import type { LockSnapshot } from '../lock.js';
import type { Command } from './command.js';
import { formatDuration } from './durations.js';
import { lockJson, previewData } from './lock-format.js';
import { renderTable } from './text-table.js';

export const listCommand: Command = {
  name: 'list',
  synopsis: '',
  summary: 'list every lock in the table',
  description:
    'Lists every lock item in the table (a consistent Scan): key, sort key, owner, lease, record version\n' +
    'number (RVN), whether it is released, and a preview of its data. With --json, an array of objects\n' +
    'with the full data as dataText (when it is UTF-8) and dataBase64.',
  flags: ['json'],
  arguments: { min: 0, max: 0, names: '' },
  exitCodes: [],
  examples: ['dynamodb-lock list --table locks', "dynamodb-lock list --table locks --json | jq '.[] | select(.isReleased | not)'"],
  async run({ flags, io, connect, interrupted }) {
    const connection = await connect();
    try {
      const locks: LockSnapshot[] = [];
      for await (const lock of connection.client.getAllLocks({ signal: interrupted })) locks.push(lock);
      locks.sort((a, b) => a.partitionKey.localeCompare(b.partitionKey) || (a.sortKey ?? '').localeCompare(b.sortKey ?? ''));
      if (flags.boolean('json')) {
        io.out(`${JSON.stringify(locks.map(lockJson), null, 2)}\n`);
        return 0;
      }
      if (locks.length === 0) {
        io.out(`No locks in table ${JSON.stringify(connection.table.tableName)}.\n`);
        return 0;
      }
      const withSortKey = connection.table.sortKeyName !== undefined;
      const headers = ['KEY', ...(withSortKey ? ['SORT KEY'] : []), 'OWNER', 'LEASE', 'RVN', 'RELEASED', 'DATA'];
      const rows = locks.map((lock) => [
        lock.partitionKey,
        ...(withSortKey ? [lock.sortKey ?? ''] : []),
        lock.ownerName,
        formatDuration(lock.leaseDuration),
        lock.recordVersionNumber,
        lock.isReleased ? 'yes' : 'no',
        previewData(lock.data),
      ]);
      io.out(renderTable(headers, rows));
      return 0;
    } finally {
      await connection.close();
    }
  },
};
