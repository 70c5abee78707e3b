/**
 * `dynamodb-lock release KEY --force`: the operator's override for a stuck
 * lock. By default it deletes a lock only once its record version number
 * has stood still for the holder's whole lease while it watched, the rule a
 * waiting Java client follows before it takes a lock over: a live holder
 * changes the RVN with every heartbeat, so its lock is never taken. The
 * delete is conditioned on the owner and RVN watched (Java's own release
 * condition). `--now` skips the wait for an operator who knows the holder is
 * gone. An item that does not decode is shown as it is and deleted only while
 * it is unchanged.
 */
import type { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { systemClock } from '../base/clock.js';
import { AttemptAnswers } from '../dynamodb/attempt-answers.js';
import { isConditionalCheckFailed, isRefusedByDynamoDB, itemOfFailedCondition } from '../dynamodb/sdk-errors.js';
import { isMalformedLockItemError, type MalformedLockItemError } from '../base/errors.js';
import { explainTableError } from '../dynamodb/lock-table.js';
import { LockSnapshot } from '../lock.js';
import { classifyFailedWrite } from '../dynamodb/write-outcome.js';
import {
  buildReleaseRequest,
  decodeLockItem,
  withOldItemOnConditionFailure,
  type LockItem,
  type LockRecord,
  type LockTable,
} from '../protocol/index.js';
import { describeLockKey, type LockKey } from '../base/lock-key.js';
import { sendWrite } from '../dynamodb/send-write.js';
import { readLockItem } from '../dynamodb/read-lock.js';
import type { Command } from './command.js';
import { confirm } from './confirm.js';
import { formatDuration } from './durations.js';
import { ExitCode } from './exit-codes.js';
import type { CliIO } from './io.js';
import { deleteItemAsRead, itemFields } from './item-as-read.js';
import { lockJson, previewData } from './lock-format.js';
import { watchUntilStandStill, type StandStillOutcome } from './stand-still.js';
import { renderFields } from './text-table.js';
import { UsageError } from './usage-error.js';

export const releaseCommand: Command = {
  name: 'release',
  synopsis: 'KEY --force [--now] [--yes] [--rvn RVN] [--sort-key VALUE]',
  summary: 'clear a stuck lock (operator override)',
  description:
    'Deletes a lock someone else holds, when its holder died or hangs. It reads the lock, shows it and\n' +
    'asks for confirmation (unless --yes), and watches it: it deletes the lock only once its record\n' +
    "version number (RVN) has stood still for the holder's whole lease, the rule by which a waiting\n" +
    'client takes a lock over. A holder that is alive writes a new RVN with every heartbeat, so its\n' +
    'lock is never taken: the release refuses with 77 as soon as the RVN moves.\n' +
    '\n' +
    '--now deletes at once, without watching, for when you know the holder is gone. If it is not, it\n' +
    'goes on working until its next heartbeat is refused, or for good if it never checks, while\n' +
    'another client may take the lock at once: two holders.\n' +
    '\n' +
    '--rvn refuses unless the lock has that RVN (e.g. from get). An item that is not a valid lock (no\n' +
    'client can acquire it) is shown attribute by attribute and deleted, after the same confirmation,\n' +
    'only if it is still as shown. Without a terminal, --yes is required.',
  flags: ['sort-key', 'force', 'now', 'yes', 'rvn', 'json'],
  arguments: { min: 1, max: 1, names: 'KEY' },
  exitCodes: [
    ['1', 'error (DynamoDB unreachable, table missing, …; a delete whose outcome is unknown), or the confirmation was declined'],
    ['3', 'nobody holds the lock'],
    ['77', 'refused: the lock changed while it was watched (its holder is alive), or differs from --rvn'],
  ],
  examples: [
    'dynamodb-lock release --table locks nightly-report --force',
    'dynamodb-lock release --table locks nightly-report --force --yes --rvn 0b7c3f1e-…',
    'dynamodb-lock release --table locks nightly-report --force --now    # the holder is known to be gone',
  ],
  async run({ flags, io, positionals, connect, interrupted }) {
    if (!flags.boolean('force')) {
      throw new UsageError('release takes a lock away from whoever holds it: pass --force to say you mean that', 'release');
    }
    const partitionKey = positionals[0] as string;
    const sortKey = flags.string('sort-key');
    const ask = !flags.boolean('yes');
    if (ask && io.stdin.isTTY !== true) {
      throw new UsageError('release asks for confirmation on a terminal; pass --yes to release without asking', 'release');
    }
    const connection = await connect();
    try {
      const { dynamoDB, table } = connection;
      const release = new Release(io, dynamoDB, table, connection.lockKey(partitionKey, sortKey), {
        ask,
        now: flags.boolean('now'),
        json: flags.boolean('json'),
        expectedRvn: flags.string('rvn'),
        interrupted,
      });
      return await release.run();
    } finally {
      await connection.close();
    }
  },
};

interface ReleaseChoice {
  readonly ask: boolean;
  readonly now: boolean;
  readonly json: boolean;
  readonly expectedRvn: string | undefined;
  readonly interrupted: AbortSignal;
}

/** A forced delete writes no RVN of its own, so a failed condition names nothing of ours (but see `#send`'s `retried`). */
const NO_WRITES_OF_OURS = { ownerName: '', recordVersionNumbers: [] };

/** What a release found, for its output. */
interface Report {
  readonly released: boolean;
  readonly text: string;
  readonly lock?: LockRecord | undefined;
  readonly current?: LockRecord | undefined;
  readonly malformed?: MalformedLockItemError | undefined;
}

class Release {
  readonly #io: CliIO;
  readonly #dynamoDB: DynamoDBClient;
  readonly #table: LockTable;
  readonly #key: LockKey;
  readonly #choice: ReleaseChoice;
  readonly #shown: string;

  constructor(io: CliIO, dynamoDB: DynamoDBClient, table: LockTable, key: LockKey, choice: ReleaseChoice) {
    this.#io = io;
    this.#dynamoDB = dynamoDB;
    this.#table = table;
    this.#key = key;
    this.#choice = choice;
    this.#shown = describeLockKey(key);
  }

  async run(): Promise<number> {
    const { interrupted } = this.#choice;
    const item = await this.#read();
    const observedAt = systemClock.now();
    if (item === undefined)
      return this.#report(ExitCode.noSuchLock, { released: false, text: `Nobody holds ${this.#shown}; nothing to release.\n` });
    let record: LockRecord;
    try {
      record = decodeLockItem(this.#table, item);
    } catch (error) {
      if (!isMalformedLockItemError(error)) throw error;
      return this.#releaseMalformed(item, error);
    }
    if (record.isReleased)
      return this.#report(ExitCode.noSuchLock, { released: false, text: `Nobody holds ${this.#shown}; nothing to release.\n`, lock: record });
    const expected = this.#choice.expectedRvn;
    if (expected !== undefined && expected !== record.recordVersionNumber) {
      const text = `Not released: ${this.#shown} has RVN ${record.recordVersionNumber} (owner ${record.ownerName}), not ${expected}: it moved on.\n`;
      return this.#report(ExitCode.lockChanged, { released: false, text, lock: record });
    }

    const stop = new AbortController();
    const signal = AbortSignal.any([interrupted, stop.signal]);
    if (this.#choice.ask) this.#show(record);
    const watching = this.#watch(record, observedAt, stop, signal);
    if (this.#choice.ask && !(await this.#confirm(record, stop, signal))) {
      stop.abort();
      await watching.catch(() => undefined);
      return this.#report(ExitCode.error, { released: false, text: 'Not released.\n', lock: record });
    }
    const outcome = await watching;
    if (outcome.kind === 'moved') return this.#reportMoved(record, outcome.current, 'while it was watched');
    return this.#delete(record);
  }

  #show(record: LockRecord): void {
    this.#io.err(
      renderFields([
        ['key', this.#shown],
        ['owner', record.ownerName],
        ['lease', formatDuration(record.leaseDurationMs)],
        ['rvn', record.recordVersionNumber],
        ['data', previewData(record.data)],
      ]),
    );
  }

  /** Watches the lock read at `observedAt` until its RVN stood still for its lease (at once with --now); aborts `stop` if it moves on. */
  #watch(record: LockRecord, observedAt: number, stop: AbortController, signal: AbortSignal): Promise<StandStillOutcome> {
    if (this.#choice.now) return Promise.resolve({ kind: 'stood-still' });
    this.#io.err(
      `dynamodb-lock: waiting until RVN ${record.recordVersionNumber} has stood still for its lease (${formatDuration(record.leaseDurationMs)}): ` +
        'a holder that is alive changes it with every heartbeat (--now does not wait)\n',
    );
    const watching = watchUntilStandStill(this.#dynamoDB, this.#table, { record, observedAt }, signal);
    watching.then(
      (outcome) => outcome.kind === 'moved' && stop.abort(),
      () => undefined,
    );
    return watching;
  }

  /** The operator's answer; true too when the lock moved on while the question was open (the watch then tells how). */
  async #confirm(record: LockRecord, stop: AbortController, signal: AbortSignal): Promise<boolean> {
    try {
      return await confirm(this.#io, `Delete this lock, taking it from ${record.ownerName}?`, signal);
    } catch (error) {
      if (this.#choice.interrupted.aborted || !stop.signal.aborted) throw error;
      this.#io.err('\n');
      return true;
    }
  }

  async #read(): Promise<LockItem | undefined> {
    try {
      return await readLockItem(this.#dynamoDB, this.#table, this.#key, this.#choice.interrupted);
    } catch (error) {
      throw await explainTableError(this.#dynamoDB, this.#table, error);
    }
  }

  async #delete(record: LockRecord): Promise<number> {
    const request = withOldItemOnConditionFailure(buildReleaseRequest(this.#table, record, { deleteLock: true }));
    const outcome = await this.#send((answers) => sendWrite(this.#dynamoDB, request, this.#choice.interrupted, answers));
    if (outcome.refused && outcome.retried) return this.#reportRetried(record, outcome.current);
    if (outcome.refused) return this.#reportMoved(record, this.#heldIn(outcome.current), 'since it was read');
    return this.#report(ExitCode.ok, {
      released: true,
      text: `Released ${this.#shown} (it was held by ${record.ownerName}, RVN ${record.recordVersionNumber}).\n`,
      lock: record,
    });
  }

  async #releaseMalformed(item: LockItem, error: MalformedLockItemError): Promise<number> {
    this.#io.err(`dynamodb-lock: ${error.message}; no client can acquire it. The item:\n${renderFields(itemFields(item))}`);
    if (this.#choice.ask && !(await confirm(this.#io, 'Delete this item?', this.#choice.interrupted))) {
      return this.#report(ExitCode.error, { released: false, text: 'Not released.\n', malformed: error });
    }
    const request = deleteItemAsRead(this.#table, this.#key, item);
    const outcome = await this.#send((answers) =>
      sendWrite(this.#dynamoDB, { operation: 'DeleteItem', input: request }, this.#choice.interrupted, answers),
    );
    if (outcome.refused && outcome.retried && outcome.current === undefined) {
      const text = `Released the malformed item ${this.#shown}: the first attempt got no answer, and the retry found it gone.\n`;
      return this.#report(ExitCode.ok, { released: true, text, malformed: error });
    }
    if (outcome.refused && outcome.retried) {
      const text = `The item ${this.#shown} was written since it was read, and the first attempt of the delete got no answer: it may have removed the item first.\n`;
      return this.#report(ExitCode.error, { released: false, text, malformed: error });
    }
    if (outcome.refused) {
      const now = outcome.current === undefined ? 'it is gone' : 'it was written meanwhile';
      return this.#report(ExitCode.lockChanged, {
        released: false,
        text: `Not released: the item ${this.#shown} changed since it was read (${now}).\n`,
        malformed: error,
      });
    }
    return this.#report(ExitCode.ok, { released: true, text: `Released the malformed item ${this.#shown}.\n`, malformed: error });
  }

  /**
   * Sends a conditional delete; when its condition fails, the item as it is
   * now comes with the refusal. `retried`: the refusal answered an SDK retry,
   * and an earlier attempt, not refused with a 4xx, may have deleted the item.
   */
  async #send(
    write: (answers: AttemptAnswers) => Promise<unknown>,
  ): Promise<{ readonly refused: false } | { readonly refused: true; readonly current: LockItem | undefined; readonly retried: boolean }> {
    const answers = new AttemptAnswers();
    try {
      await write(answers);
      return { refused: false };
    } catch (error) {
      const retried = !answers.onlyLastMayHaveApplied(error);
      if (isConditionalCheckFailed(error)) return { refused: true, current: itemOfFailedCondition(error), retried };
      const unapplied = classifyFailedWrite(error, NO_WRITES_OF_OURS).outcome === 'unapplied' || (!retried && isRefusedByDynamoDB(error));
      if (!this.#choice.interrupted.aborted && !unapplied) {
        const text = `the delete of ${this.#shown} got no answer, or a server error, so it may or may not have been applied: see dynamodb-lock get`;
        throw new Error(text, { cause: error });
      }
      throw await explainTableError(this.#dynamoDB, this.#table, error);
    }
  }

  /** The lock someone holds in `item`, if it is one. */
  #heldIn(item: LockItem | undefined): LockRecord | undefined {
    if (item === undefined) return undefined;
    try {
      const record = decodeLockItem(this.#table, item);
      return record.isReleased ? undefined : record;
    } catch {
      return undefined;
    }
  }

  #reportMoved(record: LockRecord, current: LockRecord | undefined, when: string): number {
    if (current === undefined) {
      // The holder released it.
      return this.#report(ExitCode.noSuchLock, { released: false, text: `Not released: nobody holds ${this.#shown} any more.\n`, lock: record });
    }
    const alive = current.ownerName === record.ownerName ? 'its holder is alive' : 'another client took it';
    const text = `Not released: ${this.#shown} changed ${when}: ${alive} (now owner ${current.ownerName}, RVN ${current.recordVersionNumber}).\n`;
    return this.#report(ExitCode.lockChanged, { released: false, text, lock: record, current });
  }

  /**
   * The delete's first attempt got no answer and a retry was refused,
   * finding `item`. The lock read is gone either way; whether this delete
   * removed it is known only when nobody holds the lock now (else the next
   * holder may have taken it before the delete, or after).
   */
  #reportRetried(record: LockRecord, item: LockItem | undefined): number {
    const was = `it was held by ${record.ownerName}, RVN ${record.recordVersionNumber}`;
    const unanswered = 'the first attempt of the delete got no answer';
    let current: LockRecord | undefined;
    try {
      current = item === undefined ? undefined : decodeLockItem(this.#table, item);
    } catch {
      const text = `${this.#shown}: ${was}; ${unanswered}, and the retry found an item that is not a valid lock: see dynamodb-lock get.\n`;
      return this.#report(ExitCode.error, { released: false, text, lock: record });
    }
    if (current === undefined || current.isReleased) {
      const text = `Released ${this.#shown} (${was}): ${unanswered}, and the retry found nobody holding it.\n`;
      return this.#report(ExitCode.ok, { released: true, text, lock: record });
    }
    const text =
      `${this.#shown} is held by ${current.ownerName} now (RVN ${current.recordVersionNumber}); ${was}. The first attempt of ` +
      `the delete got no answer: it may have removed that lock before ${current.ownerName} took it, or ${current.ownerName} took it first.\n`;
    return this.#report(ExitCode.error, { released: false, text, lock: record, current });
  }

  #report(code: number, report: Report): number {
    if (!this.#choice.json) {
      this.#io.out(report.text);
      return code;
    }
    const snapshot = (record: LockRecord | undefined) => (record === undefined ? null : lockJson(new LockSnapshot(record, systemClock.now())));
    this.#io.out(
      `${JSON.stringify({
        released: report.released,
        lock: snapshot(report.lock),
        ...(report.current === undefined ? {} : { current: snapshot(report.current) }),
        ...(report.malformed === undefined ? {} : { malformed: report.malformed.message }),
      })}\n`,
    );
    return code;
  }
}
