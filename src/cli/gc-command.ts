/**
 * `dynamodb-lock gc`: one pass of `collectAbandoned` over the table, for an
 * operator or a scheduled job. It deletes the items whose RVN stood still
 * for their lease while it watched (the rule by which a waiting client takes
 * a lock over), each conditioned on that RVN and owner, and says what it
 * deleted and why it left the rest.
 */
import type { AbandonedItemsReport, LeftItem, SeenLock } from '../gc/collect-options.js';
import type { Command } from './command.js';
import { formatDuration } from './durations.js';
import { ExitCode } from './exit-codes.js';
import type { LockJson } from './lock-format.js';
import { renderTable } from './text-table.js';

export const gcCommand: Command = {
  name: 'gc',
  synopsis: '[--dry-run] [--prefix PREFIX] [--max-duration DURATION] [--max-lease DURATION]',
  summary: 'delete the items of holders that stopped (abandoned locks)',
  description:
    'Reads every lock item, watches each RVN for its lease, reads them again, and deletes those that\n' +
    'did not change: their holders stopped, as a waiting client would judge before taking the lock\n' +
    'over. Each delete is conditioned on the RVN and owner it watched, so a holder that is alive (it\n' +
    'writes a new RVN with every heartbeat) never loses its lock. Released items are collected the\n' +
    'same way. The pass lasts at most --max-duration (default 10 min): items whose lease it cannot\n' +
    'wait out are left unwatched, and so are leases over --max-lease. It prints every item it deleted\n' +
    'or left, and why; --dry-run deletes nothing. See docs/gc.md.',
  flags: ['dry-run', 'prefix', 'max-duration', 'max-lease', 'json'],
  arguments: { min: 0, max: 0, names: '' },
  exitCodes: [
    ['1', 'error; a delete failed or got no answer (the item is listed with the error)'],
    ['75', '--max-duration passed before the pass had read every item: run it again, or give it longer'],
  ],
  examples: [
    'dynamodb-lock gc --table locks --dry-run',
    'dynamodb-lock gc --table locks --prefix jobs/ --max-duration 2m',
    'dynamodb-lock gc --table locks --json | jq \'.left[] | select(.reason == "error")\'',
  ],
  async run({ flags, io, connect, interrupted }) {
    const options = {
      dryRun: flags.boolean('dry-run'),
      partitionKeyPrefix: flags.string('prefix'),
      maxDuration: flags.duration('max-duration'),
      maxLease: flags.duration('max-lease'),
    };
    const connection = await connect();
    try {
      const report = await connection.client.collectAbandoned({ ...options, signal: interrupted });
      if (flags.boolean('json')) io.out(`${JSON.stringify(reportJson(report, options.dryRun), null, 2)}\n`);
      else io.out(reportText(report, options.dryRun, connection.table.sortKeyName !== undefined));
      if (report.left.some((left) => left.reason === 'error')) return ExitCode.error;
      return report.complete ? ExitCode.ok : ExitCode.notAcquired;
    } finally {
      await connection.close();
    }
  },
};

/** Why an item was left, in words. */
const LEFT_BECAUSE: Readonly<Record<LeftItem['reason'], string>> = {
  'held-here': 'held by this command',
  moved: 'held: its RVN moved while watched',
  taken: 'taken: its RVN moved before the delete',
  gone: 'gone: released or deleted meanwhile',
  'lease-over-cap': 'lease over --max-lease',
  'lease-outlasts-pass': 'lease longer than the pass',
  'pass-ended': 'the pass ended first',
  'dry-run': 'would be deleted (--dry-run)',
  error: 'error',
  malformed: 'not a valid lock item',
};

type SeenJson = Omit<LockJson, 'dataText' | 'dataBase64'>;

function seenJson(lock: SeenLock): SeenJson {
  const { partitionKey, sortKey, ownerName, leaseDurationMs, recordVersionNumber, isReleased } = lock;
  return { partitionKey, sortKey: sortKey ?? null, ownerName, leaseDuration: leaseDurationMs, recordVersionNumber, isReleased };
}

const errorText = (error: unknown): string => (error instanceof Error ? error.message : String(error));

function reportJson(report: AbandonedItemsReport, dryRun: boolean): Record<string, unknown> {
  return {
    dryRun,
    complete: report.complete,
    durationMs: Math.round(report.durationMs),
    deleted: report.deleted.map(seenJson),
    left: report.left.map((left) =>
      left.reason === 'malformed'
        ? { reason: left.reason, item: left.item, error: left.error.message }
        : { reason: left.reason, ...seenJson(left.lock), ...(left.reason === 'error' ? { error: errorText(left.error) } : {}) },
    ),
  };
}

function reportText(report: AbandonedItemsReport, dryRun: boolean, withSortKey: boolean): string {
  const deleted = dryRun ? 'deleted nothing (--dry-run)' : `deleted ${report.deleted.length}`;
  let text = `Pass of ${formatDuration(report.durationMs)}: ${deleted}, left ${report.left.length}.\n`;
  if (!report.complete) text += 'The pass ended (--max-duration) before it had read every item; the rest were not looked at.\n';
  const row = (lock: SeenLock, result: string): string[] => [
    lock.partitionKey,
    ...(withSortKey ? [lock.sortKey ?? ''] : []),
    lock.ownerName,
    formatDuration(lock.leaseDurationMs),
    lock.recordVersionNumber,
    result,
  ];
  const rows = [
    ...report.deleted.map((lock) => row(lock, 'deleted')),
    ...report.left.map((left) =>
      left.reason === 'malformed'
        ? [JSON.stringify(left.item), ...(withSortKey ? [''] : []), '', '', '', `${LEFT_BECAUSE.malformed}: ${left.error.message}`]
        : row(left.lock, left.reason === 'error' ? `error: ${errorText(left.error)}` : LEFT_BECAUSE[left.reason]),
    ),
  ];
  if (rows.length === 0) return text;
  return text + renderTable(['KEY', ...(withSortKey ? ['SORT KEY'] : []), 'OWNER', 'LEASE', 'RVN', 'RESULT'], rows);
}
