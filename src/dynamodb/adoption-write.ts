/**
 * The write that adopts a handed-off lock (protocol/hand-off.ts), sorted as
 * every acquiring write is (write-outcome.ts): one whose reply was lost may
 * have been applied. Such a write is settled by reading the item back: our
 * owner name and RVN there mean it was applied; the item still as handed
 * off means it was not, yet, and the same write (the same RVN) goes again,
 * so that a lost one landing first makes the next refused by our own item,
 * which counts as applied. Anything else means the lock moved on.
 */
import { UpdateItemCommand, type DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { buildAdoptionRequest, LockAttribute, stillHandedOff, type AdoptionWriteOptions, type LockHandOff } from '../protocol/index.js';
import type { LockItem, LockTable } from '../protocol/index.js';
import type { LeaseRestatement } from './lease-restatement.js';
import { readLockItem } from './read-lock.js';
import { itemOfFailedCondition } from './sdk-errors.js';
import { classifyFailedWrite } from './write-outcome.js';

/** How often the adopting write is sent while its replies are lost and the handle still stands. */
const MAX_SENDS = 3;

/**
 * - `adopted`: the table holds the adopter's write; `item` as written (its data and additional attributes);
 * - `refused`: the lock moved on since the hand-off; `item` as found, none when it is gone.
 */
export type AdoptionOutcome =
  { readonly outcome: 'adopted'; readonly item: LockItem } | { readonly outcome: 'refused'; readonly item: LockItem | undefined };

/**
 * Adopts the handle's lock, or throws the SDK's error when nothing was
 * applied or the outcome stays unknown. A bounded adopter's `restatement`
 * states its lease again as each attempt leaves.
 */
export async function writeAdoption(
  dynamoDB: Pick<DynamoDBClient, 'send'>,
  table: LockTable,
  handle: LockHandOff,
  adopter: AdoptionWriteOptions,
  signal: AbortSignal,
  restatement?: LeaseRestatement,
): Promise<AdoptionOutcome> {
  const input = buildAdoptionRequest(table, handle, adopter);
  const ours = { ownerName: adopter.ownerName, recordVersionNumbers: [adopter.newRecordVersionNumber] };
  const isOurs = (item: LockItem | undefined): item is LockItem =>
    item?.[LockAttribute.ownerName]?.S === adopter.ownerName && item[LockAttribute.recordVersionNumber]?.S === adopter.newRecordVersionNumber;
  for (let sends = 1; ; sends++) {
    let error: unknown;
    try {
      const command = new UpdateItemCommand(input);
      const output = await dynamoDB.send(restatement?.watch(command) ?? command, { abortSignal: signal });
      return { outcome: 'adopted', item: output.Attributes ?? {} };
    } catch (caught) {
      error = caught;
    }
    const failed = classifyFailedWrite(error, ours);
    if (failed.outcome === 'applied') return { outcome: 'adopted', item: itemOfFailedCondition(error) ?? {} };
    if (failed.outcome === 'refused') return { outcome: 'refused', item: failed.item };
    if (failed.outcome === 'unapplied' || signal.aborted) throw error;
    const item = await readLockItem(dynamoDB, table, handle, signal);
    if (isOurs(item)) return { outcome: 'adopted', item };
    if (!stillHandedOff(handle, item)) return { outcome: 'refused', item };
    if (sends === MAX_SENDS) throw error;
  }
}
