/** What a CLI command is, and what it gets to work with. */
import type { ConnectOptions, Connection, LeaseTimes } from './connection.js';
import type { FlagName, Flags } from './flags.js';
import type { CliIO } from './io.js';

export interface CommandContext {
  readonly io: CliIO;
  readonly flags: Flags;
  /** The arguments after the command's name. */
  readonly positionals: readonly string[];
  /** Everything after `--`. */
  readonly commandArgv: readonly string[];
  /** The lease of the locks the command takes (`--lease`, or the default). */
  readonly lease: LeaseTimes;
  /**
   * Aborts, with an `InterruptedError`, on SIGINT, SIGTERM or SIGHUP. Not
   * for commands that handle signals themselves (`handlesSignals`).
   */
  readonly interrupted: AbortSignal;
  /**
   * Connects to DynamoDB as the flags and the AWS environment say, and reads
   * the table's key names unless flags give them; `--local` starts DynamoDB
   * Local and creates the table.
   */
  readonly connect: (options?: ConnectOptions) => Promise<Connection>;
}

export interface Command {
  readonly name: string;
  /** The arguments and flags after the command's name, for the usage line. */
  readonly synopsis: string;
  /** One line for the command list. */
  readonly summary: string;
  /** What it does, in a few lines. */
  readonly description: string;
  /** Flags besides the connection flags. */
  readonly flags: readonly FlagName[];
  /** How many arguments it takes after its name. */
  readonly arguments: { readonly min: number; readonly max: number; readonly names: string };
  /** Exit codes it uses besides 0, 1 and 2. */
  readonly exitCodes: readonly (readonly [code: string, meaning: string])[];
  readonly examples: readonly string[];
  /** It installs its own signal handlers (run forwards signals to its command). */
  readonly handlesSignals?: boolean;
  run(context: CommandContext): Promise<number>;
}
