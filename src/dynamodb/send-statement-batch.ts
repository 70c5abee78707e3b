/**
 * Sends PartiQL statements in one BatchExecuteStatement call and reports each
 * statement's outcome as the matching single call would have failed, so that
 * the error classifiers of `sdk-errors.ts` sort them the same way.
 */
import { BatchExecuteStatementCommand, type BatchStatementRequest, type DynamoDBClient } from '@aws-sdk/client-dynamodb';
import type { LockItem } from '../protocol/index.js';
import type { Departure } from './departure.js';
import { exceptionOfStatementCode } from './sdk-errors.js';

/**
 * Marks a {@link StatementFailedError} of any copy of this package: its
 * `name` is the SDK exception's, so a guard cannot go by name. A registered
 * symbol is the same in every copy.
 */
const STATEMENT_FAILED: unique symbol = Symbol.for('dynamodb-lock.StatementFailedError');

/** One statement of a batch failed; `name` is the SDK exception a single call would have thrown. */
export class StatementFailedError extends Error {
  readonly code: string;
  /** The item as it was, when a condition failed (`ReturnValuesOnConditionCheckFailure: ALL_OLD`). */
  readonly Item: LockItem | undefined;
  /** `attempts`: how many times the SDK sent the whole batch; an earlier attempt may have applied this statement. */
  readonly $metadata: { readonly httpStatusCode: number; readonly attempts: number | undefined };

  constructor(code: string, message: string | undefined, item: LockItem | undefined, attempts: number | undefined) {
    const { name, httpStatusCode } = exceptionOfStatementCode(code);
    super(message ?? code);
    this.name = name;
    this.code = code;
    this.Item = item;
    this.$metadata = { httpStatusCode, attempts };
  }

  /** On the prototype, not the instance, so that it shows in neither logs nor comparisons. */
  get [STATEMENT_FAILED](): true {
    return true;
  }
}

/** Also true for a {@link StatementFailedError} of another copy of this package. */
export const isStatementFailedError = (error: unknown): error is StatementFailedError =>
  error instanceof Error && (error as { [STATEMENT_FAILED]?: unknown })[STATEMENT_FAILED] === true;

/**
 * Resolves with one entry per statement, in order: `undefined` where it was
 * applied, its error where it failed. Rejects when the call as a whole failed.
 */
export async function sendStatementBatch(
  dynamoDB: Pick<DynamoDBClient, 'send'>,
  statements: BatchStatementRequest[],
  signal: AbortSignal,
  departures: readonly Departure[] = [],
): Promise<(StatementFailedError | undefined)[]> {
  const command = new BatchExecuteStatementCommand({ Statements: statements });
  for (const departure of departures) departure.watch(command, dynamoDB);
  const output = await dynamoDB.send(command, { abortSignal: signal });
  const responses = output.Responses ?? [];
  const attempts = output.$metadata.attempts;
  return statements.map((_, i) => {
    const response = responses[i];
    // A reply without an entry for a statement says nothing about it: as after a lost reply.
    if (response === undefined) return new StatementFailedError('MissingResponse', 'no response for this statement', undefined, attempts);
    const error = response.Error;
    return error === undefined ? undefined : new StatementFailedError(error.Code ?? 'Unknown', error.Message, error.Item, attempts);
  });
}
