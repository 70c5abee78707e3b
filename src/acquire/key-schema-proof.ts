/**
 * Whether this client may send the new-lock write before any read.
 *
 * DynamoDB checks a PutItem's item only for the table's key attributes being
 * present. A client configured with a sort key on a hash-only table would
 * therefore create a lock item that ignores the sort key, where a read with
 * the full key is refused as not matching the schema. So a sort-key client
 * reads first (as Java does) until one read has succeeded, which proves that
 * the table has that sort key. A hash-only client needs no proof: a PutItem
 * without a key attribute the table has is refused.
 */
import type { KeySchemaNames } from '../protocol/index.js';

export class KeySchemaProof {
  #proven: boolean;

  constructor(schema: KeySchemaNames) {
    this.#proven = schema.sortKeyName === undefined;
  }

  /** True once the new-lock write may go first. */
  get proven(): boolean {
    return this.#proven;
  }

  /** A consistent read with this client's full key succeeded. */
  confirm(): void {
    this.#proven = true;
  }
}
