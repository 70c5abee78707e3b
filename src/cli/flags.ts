/**
 * Every flag of the CLI, and the parsing of a command line into a command,
 * its arguments, its flags and (for `run`) the command after `--`.
 *
 * One registry for all commands: `node:util`'s parser must know each flag's
 * type to tell a flag's value from an argument, before it knows which command
 * the line is for. Each command then accepts only its own flags and the
 * connection flags.
 */
import { parseArgs } from 'node:util';
import { parseDuration } from './durations.js';
import { UsageError } from './usage-error.js';

export interface FlagSpec {
  readonly type: 'string' | 'boolean';
  readonly short?: string;
  /** The value's placeholder in help, e.g. `NAME`. */
  readonly value?: string;
  readonly description: string;
}

export const FLAGS = Object.freeze({
  table: { type: 'string', value: 'NAME', description: 'the lock table (required)' },
  endpoint: {
    type: 'string',
    value: 'URL',
    description: 'DynamoDB endpoint (default: AWS_ENDPOINT_URL_DYNAMODB, AWS_ENDPOINT_URL, else AWS)',
  },
  region: { type: 'string', value: 'REGION', description: 'AWS region (default: AWS_REGION, AWS_DEFAULT_REGION or ~/.aws/config)' },
  'partition-key-name': {
    type: 'string',
    value: 'NAME',
    description: 'partition key attribute (default: read from the table; "key" for create-table)',
  },
  'sort-key-name': { type: 'string', value: 'NAME', description: 'sort key attribute (default: read from the table; none for create-table)' },
  lease: { type: 'string', value: 'DURATION', description: 'lease of the lock (default 20s)' },
  heartbeat: { type: 'string', value: 'DURATION', description: 'time between heartbeats (default a quarter of the lease)' },
  local: {
    type: 'boolean',
    description: 'start a private in-memory DynamoDB Local with the table, for this command only (needs Java)',
  },
  json: { type: 'boolean', description: 'print JSON for scripts instead of text for people' },
  help: { type: 'boolean', short: 'h', description: 'show help' },
  version: { type: 'boolean', description: 'print the version of dynamodb-lock' },

  'sort-key': { type: 'string', value: 'VALUE', description: "the lock's sort key value (tables with a sort key)" },
  'billing-mode': { type: 'string', value: 'MODE', description: 'on-demand (default) or provisioned' },
  'read-capacity': { type: 'string', value: 'UNITS', description: 'read capacity units (with --billing-mode provisioned)' },
  'write-capacity': { type: 'string', value: 'UNITS', description: 'write capacity units (with --billing-mode provisioned)' },
  'if-not-exists': { type: 'boolean', description: 'succeed if the table already exists with the same keys' },
  interval: { type: 'string', value: 'DURATION', description: 'time between two reads (default 1s)' },
  force: { type: 'boolean', description: 'required: you override whoever holds the lock' },
  now: {
    type: 'boolean',
    description: 'delete at once, without watching the RVN for a lease: only if you know the holder is gone',
  },
  yes: { type: 'boolean', short: 'y', description: 'do not ask for confirmation' },
  rvn: {
    type: 'string',
    value: 'RVN',
    description: 'release only if the lock still has this record version number (e.g. from get)',
  },
  wait: { type: 'boolean', description: 'wait for the lock as long as it takes' },
  timeout: { type: 'string', value: 'DURATION', description: 'wait for the lock at most this long' },
  grace: {
    type: 'string',
    value: 'DURATION',
    description: 'longest time from SIGTERM to SIGKILL once the lock is lost (default and most: half the safety margin)',
  },
  owner: { type: 'string', value: 'NAME', description: 'owner name written on the lock (default: host name + a random UUID)' },
  data: { type: 'string', value: 'TEXT', description: 'data stored with the lock (default: JSON with host, pid and command name)' },
  permits: { type: 'string', value: 'N', description: 'take one of N permits of the semaphore KEY instead of the lock KEY' },
  'dry-run': { type: 'boolean', description: 'watch and report, delete nothing' },
  prefix: { type: 'string', value: 'PREFIX', description: 'only the locks whose key starts with this' },
  'max-duration': { type: 'string', value: 'DURATION', description: 'longest the pass lasts (default 10m)' },
  'max-lease': { type: 'string', value: 'DURATION', description: 'leave locks with a longer lease unwatched (default: none)' },
} satisfies Record<string, FlagSpec>);

export type FlagName = keyof typeof FLAGS;
type StringFlag = { [N in FlagName]: (typeof FLAGS)[N]['type'] extends 'string' ? N : never }[FlagName];
type BooleanFlag = Exclude<FlagName, StringFlag>;

/** Flags every command takes. */
export const CONNECTION_FLAGS: readonly FlagName[] = Object.freeze([
  'table',
  'endpoint',
  'region',
  'partition-key-name',
  'sort-key-name',
  'local',
  'help',
]);

export interface CommandLine {
  /** The first argument: the command's name. */
  readonly command: string | undefined;
  /** The arguments after the command's name (before `--`). */
  readonly positionals: readonly string[];
  /** Everything after the first `--`, untouched. */
  readonly commandArgv: readonly string[];
  /** Whether the line had a `--`. */
  readonly hasCommandArgv: boolean;
  readonly flags: Flags;
}

/** Typed access to the flags given. */
export class Flags {
  readonly #values: Readonly<Record<string, string | boolean | undefined>>;
  constructor(values: Readonly<Record<string, string | boolean | undefined>>) {
    this.#values = values;
  }
  /** The flags that were given, by name. */
  given(): FlagName[] {
    return (Object.keys(this.#values) as FlagName[]).filter((name) => this.#values[name] !== undefined);
  }
  string(name: StringFlag): string | undefined {
    const value = this.#values[name];
    if (value === '') throw new UsageError(`--${name} needs a value`);
    return typeof value === 'string' ? value : undefined;
  }
  boolean(name: BooleanFlag): boolean {
    return this.#values[name] === true;
  }
  duration(name: StringFlag): number | undefined {
    const text = this.string(name);
    return text === undefined ? undefined : parseDuration(name, text);
  }
  /** A whole number ≥ 1. */
  count(name: StringFlag): number | undefined {
    const text = this.string(name);
    if (text === undefined) return undefined;
    const n = Number(text);
    if (!/^\d+$/.test(text) || !Number.isSafeInteger(n) || n < 1)
      throw new UsageError(`--${name} must be a whole number ≥ 1, got ${JSON.stringify(text)}`);
    return n;
  }
}

/** Splits off `--` and parses the rest; unknown flags and missing values are usage errors. */
export function parseCommandLine(argv: readonly string[]): CommandLine {
  const dashDash = argv.indexOf('--');
  const before = dashDash < 0 ? [...argv] : argv.slice(0, dashDash);
  const commandArgv = dashDash < 0 ? [] : argv.slice(dashDash + 1);
  let parsed: { values: Record<string, string | boolean | undefined>; positionals: string[] };
  try {
    parsed = parseArgs({ args: before, options: FLAGS, strict: true, allowPositionals: true });
  } catch (error) {
    throw new UsageError(
      (error as Error).message.replace(/\. To specify a positional argument.*$/s, ''),
      before.find((a) => !a.startsWith('-')),
    );
  }
  const [command, ...positionals] = parsed.positionals;
  return { command, positionals, commandArgv, hasCommandArgv: dashDash >= 0, flags: new Flags(parsed.values) };
}
