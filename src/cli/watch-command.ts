/** `dynamodb-lock watch KEY`: a line for each change of holder or RVN, until interrupted. */
import { watchLock } from '../election/watch-lock.js';
import type { Command } from './command.js';
import type { Connection } from './connection.js';
import { formatDuration } from './durations.js';
import { describeLockKey } from '../base/lock-key.js';
import { lockJson, previewData, type ShownLock } from './lock-format.js';
import { setLongTimeout, type LongTimer } from './long-timer.js';

/** What a read showed, compared with the read before. */
export type WatchEvent = 'held' | 'acquired' | 'heartbeat' | 'free' | 'stale';

export function watchEventOf(previous: ShownLock | undefined, current: ShownLock | undefined, first: boolean): WatchEvent {
  if (current === undefined) return 'free';
  if (first) return 'held';
  return previous?.ownerName === current.ownerName ? 'heartbeat' : 'acquired';
}

function describe(event: WatchEvent, key: string, view: ShownLock | undefined): string {
  if (view === undefined) return `nobody holds ${key}`;
  const holder = `owner ${view.ownerName}  rvn ${view.recordVersionNumber}  lease ${formatDuration(view.leaseDuration)}`;
  const data = previewData(view.data);
  if (event === 'stale') {
    return `rvn ${view.recordVersionNumber} unchanged for its lease (${formatDuration(view.leaseDuration)}): ${view.ownerName} stopped heartbeating; a waiting client may take ${key} over`;
  }
  return `${holder}${data === '' ? '' : `  data ${data}`}`;
}

export const watchCommand: Command = {
  name: 'watch',
  synopsis: 'KEY [--sort-key VALUE] [--interval DURATION]',
  summary: 'print each change of holder or RVN until interrupted',
  description:
    'Reads the lock every --interval (default 1s) and prints a line when it changes: held (the first\n' +
    'read), acquired (a new holder), heartbeat (the same holder wrote a new record version number),\n' +
    'free (no item, or a released one), and stale once an RVN stood still for its whole lease on this\n' +
    "watcher's clock: the holder stopped heartbeating and a waiting client may take the lock over.\n" +
    'Times are wall-clock (UTC), for matching with logs. Runs until stopped by SIGINT (Ctrl-C), SIGTERM\n' +
    'or SIGHUP, then exits with 0. With --json, one object per line: {"time", "event", "lock"}.',
  flags: ['sort-key', 'interval', 'json'],
  arguments: { min: 1, max: 1, names: 'KEY' },
  exitCodes: [['0', 'stopped by SIGINT (Ctrl-C), SIGTERM or SIGHUP: its normal end']],
  examples: ['dynamodb-lock watch --table locks nightly-report', 'dynamodb-lock watch --table locks nightly-report --json --interval 250ms'],
  async run({ flags, io, positionals, connect, interrupted }) {
    const partitionKey = positionals[0] as string;
    const sortKey = flags.string('sort-key');
    const pollInterval = flags.duration('interval');
    const json = flags.boolean('json');
    const key = describeLockKey({ partitionKey, sortKey });
    const print = (event: WatchEvent, view: ShownLock | undefined): void => {
      const time = new Date().toISOString();
      io.out(
        json
          ? `${JSON.stringify({ time, event, lock: view === undefined ? null : lockJson(view) })}\n`
          : `${time}  ${event.padEnd(9)}  ${describe(event, key, view)}\n`,
      );
    };
    let connection: Connection;
    try {
      connection = await connect();
    } catch (error) {
      // Interrupted before the first read: the end of a watch all the same.
      if (interrupted.aborted) return 0;
      throw error;
    }
    let staleTimer: LongTimer | undefined;
    try {
      connection.lockKey(partitionKey, sortKey);
      let first = true;
      let previous: ShownLock | undefined;
      for await (const view of watchLock(connection.client, partitionKey, { sortKey, pollInterval, signal: interrupted })) {
        staleTimer?.clear();
        print(watchEventOf(previous, view, first), view);
        // Timed from the first read showing this RVN, as a waiting client times it.
        if (view !== undefined) staleTimer = setLongTimeout(() => print('stale', view), view.leaseDuration);
        first = false;
        previous = view;
      }
      return 0;
    } finally {
      staleTimer?.clear();
      await connection.close();
    }
  },
};
