/**
 * What each attempt of one SDK call was answered with. The error the SDK
 * throws describes its last attempt only, so a refusal after a retry may
 * follow an earlier attempt that was applied, unless every earlier attempt
 * was answered with a 4xx: DynamoDB refused it (a throttle, say) and applied
 * nothing. A middleware on the command, inside the SDK's retries and before
 * the answer is parsed, notes each attempt's HTTP status.
 */
import { attemptsOf, isRefusalStatus } from './sdk-errors.js';

type Middleware = (next: (args: unknown) => Promise<unknown>) => (args: unknown) => Promise<unknown>;

/** Inside the retry middleware (finalizeRequest), next to the handler: the raw answer of each attempt. */
const WHERE = { step: 'deserialize', priority: 'low' } as const;

export class AttemptAnswers {
  /** Per attempt, in order: the HTTP status of its answer, `undefined` when none came. */
  readonly #statuses: (number | undefined)[] = [];

  /** Notes the answer of each attempt of `command`; returns the command. */
  watch<Command extends { readonly middlewareStack: object }>(command: Command): Command {
    const note: Middleware = (next) => async (args) => {
      const index = this.#statuses.push(undefined) - 1;
      const result = await next(args);
      this.#statuses[index] = (result as { readonly response?: { readonly statusCode?: number } }).response?.statusCode;
      return result;
    };
    (command.middlewareStack as { add(middleware: Middleware, options: object): void }).add(note, WHERE);
    return command;
  }

  /**
   * Whether `error`, the call's failure, is the answer of its only attempt
   * that can have been applied: each attempt before the last was answered
   * with a 4xx, or there was none. False when the attempts seen do not
   * match the SDK's count.
   */
  onlyLastMayHaveApplied(error: unknown): boolean {
    const attempts = attemptsOf(error) ?? 1;
    if (attempts <= 1) return true;
    if (attempts !== this.#statuses.length) return false;
    return this.#statuses.slice(0, -1).every(isRefusalStatus);
  }
}
