/**
 * Turns what went wrong into one line for the operator and an exit code.
 * The hints name the flag or environment variable that fixes the problem.
 */
import { isClientSideError, isCredentialsError, isResourceInUse, isThrottling } from '../dynamodb/sdk-errors.js';
import {
  DynamoDBTimeoutError,
  DynamoDBUnavailableError,
  InvalidArgumentError,
  LockTableAlreadyExistsError,
  LockTableDoesNotExistError,
  LockTableSchemaMismatchError,
} from '../base/errors.js';
import { describeLockKey } from '../base/lock-key.js';
import { ExitCode, signalExitCode } from './exit-codes.js';
import { ForeignAnswerError } from './foreign-answer.js';
import { InterruptedError, SetupError, UsageError } from './usage-error.js';

export interface Explanation {
  /** What to print after "dynamodb-lock: ", or nothing. */
  readonly message: string | undefined;
  readonly exitCode: number;
}

export function explainError(error: unknown): Explanation {
  const message = error instanceof Error ? error.message : String(error);
  if (error instanceof UsageError) {
    const help = error.command === undefined ? 'dynamodb-lock --help' : `dynamodb-lock ${error.command} --help`;
    return { message: `${message} (see ${help})`, exitCode: ExitCode.usage };
  }
  if (error instanceof InterruptedError) return { message: undefined, exitCode: signalExitCode(error.signal) };
  if (error instanceof SetupError) {
    return { message: error.cause === undefined ? message : `${message}: ${errorSummary(error.cause)}`, exitCode: ExitCode.error };
  }
  if (error instanceof InvalidArgumentError) return { message: inFlagWords(message), exitCode: ExitCode.usage };
  if (error instanceof LockTableDoesNotExistError) {
    return { message: `${message}; create it with: dynamodb-lock create-table --table ${error.tableName}`, exitCode: ExitCode.error };
  }
  if (error instanceof LockTableSchemaMismatchError) {
    return {
      message: `${inFlagWords(message)}; pass the table's key names with --partition-key-name and --sort-key-name`,
      exitCode: ExitCode.error,
    };
  }
  if (error instanceof LockTableAlreadyExistsError || isResourceInUse(error)) {
    return { message: `${message} (to accept an existing table with the same keys, pass --if-not-exists)`, exitCode: ExitCode.error };
  }
  if (error instanceof ForeignAnswerError) {
    return {
      message: `the endpoint ${message}: check --endpoint, AWS_ENDPOINT_URL_DYNAMODB and AWS_ENDPOINT_URL`,
      exitCode: ExitCode.error,
    };
  }
  if (/region is missing/i.test(message)) {
    return { message: 'no AWS region: set AWS_REGION or pass --region', exitCode: ExitCode.error };
  }
  if (isCredentialsError(error)) {
    return {
      message: `AWS credentials missing or refused (${message}); set AWS_PROFILE or AWS_ACCESS_KEY_ID/AWS_SECRET_ACCESS_KEY`,
      exitCode: ExitCode.error,
    };
  }
  if (error instanceof DynamoDBUnavailableError) {
    return {
      message: `lock ${describeLockKey(error)} not acquired: ${explainError(error.cause).message ?? 'DynamoDB gave no usable answer'}`,
      exitCode: ExitCode.error,
    };
  }
  if (isThrottling(error)) {
    return {
      message: `DynamoDB throttled every attempt (${errorSummary(error)}); try again later, or raise the table's capacity`,
      exitCode: ExitCode.error,
    };
  }
  if (isClientSideError(error) || error instanceof DynamoDBTimeoutError) {
    return {
      message: `cannot reach DynamoDB (${message}); check --endpoint, AWS_ENDPOINT_URL_DYNAMODB and the network`,
      exitCode: ExitCode.error,
    };
  }
  if (error instanceof Error && error.cause instanceof Error) {
    return { message: `${message}: ${error.cause.message}`, exitCode: ExitCode.error };
  }
  return { message: errorSummary(error), exitCode: ExitCode.error };
}

/**
 * An error in a few words: its name and message (`ThrottlingException: Rate
 * of requests exceeds the allowed throughput.`), the name left out when the
 * message already starts with it. An error without a message (an
 * AggregateError of refused connections) is told by its code.
 */
export function errorSummary(error: unknown): string {
  if (!(error instanceof Error)) return String(error);
  const code = (error as { code?: unknown }).code;
  const message = error.message === '' && typeof code === 'string' ? code : error.message;
  if (message === '') return error.name;
  return error.name === '' || message.startsWith(error.name) ? message : `${error.name}: ${message}`;
}

/** The library's option names, as the flags that set them. */
const FLAG_OF_OPTION: Readonly<Record<string, string>> = Object.freeze({
  tableName: '--table',
  partitionKeyName: '--partition-key-name',
  sortKeyName: '--sort-key-name',
  leaseDuration: '--lease',
  heartbeatPeriod: '--heartbeat',
  ownerName: '--owner',
  safetyMargin: 'the safety margin',
});
const OPTION_NAME = new RegExp(`\\b(${Object.keys(FLAG_OF_OPTION).join('|')})\\b`, 'g');

/** A message of the library about its options, reworded to name the flags. */
function inFlagWords(message: string): string {
  return message.replace(OPTION_NAME, (option) => FLAG_OF_OPTION[option] ?? option);
}
