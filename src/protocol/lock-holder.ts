/** What an error says about the holder of a lock, from the item as read. */
import type { LockHolder } from '../base/errors.js';
import type { LockRecord } from './index.js';

export const holderOf = (record: LockRecord): LockHolder => ({
  ownerName: record.ownerName,
  recordVersionNumber: record.recordVersionNumber,
  leaseDuration: record.leaseDurationMs,
  isReleased: record.isReleased,
});
