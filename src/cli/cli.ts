/**
 * The `dynamodb-lock` command line: parses it, runs the command, and turns
 * every outcome into an exit code. Streams and environment come in through
 * `io`, so unit tests run it in-process.
 */
import type { Command, CommandContext } from './command.js';
import { connect, connectionSettings } from './connection.js';
import { createTableCommand } from './create-table-command.js';
import { signalExitCode } from './exit-codes.js';
import { explainError } from './explain-error.js';
import { CONNECTION_FLAGS, parseCommandLine, type CommandLine } from './flags.js';
import { gcCommand } from './gc-command.js';
import { getCommand } from './get-command.js';
import { commandHelp, generalHelp } from './help.js';
import type { CliIO } from './io.js';
import { listCommand } from './list-command.js';
import { releaseCommand } from './release-command.js';
import { runCommand } from './run-command.js';
import { SignalRelay } from './signal-relay.js';
import { InterruptedError, UsageError } from './usage-error.js';
import { packageVersion } from './version.js';
import { watchCommand } from './watch-command.js';

export const COMMANDS: readonly Command[] = Object.freeze([
  createTableCommand,
  listCommand,
  getCommand,
  watchCommand,
  releaseCommand,
  runCommand,
  gcCommand,
]);

const INTERRUPTING_SIGNALS: readonly NodeJS.Signals[] = ['SIGINT', 'SIGTERM', 'SIGHUP'];

/** Runs one command line; resolves with the exit code. */
export async function runCli(argv: readonly string[], io: CliIO): Promise<number> {
  try {
    const line = parseCommandLine(argv);
    if (line.flags.boolean('version')) {
      io.out(`dynamodb-lock ${packageVersion()}\n`);
      return 0;
    }
    if (line.command === undefined || line.command === 'help') return showHelp(line, io);
    const command = findCommand(line.command);
    if (line.flags.boolean('help')) {
      io.out(commandHelp(command));
      return 0;
    }
    checkUsage(command, line);
    return await execute(command, line, io);
  } catch (error) {
    const { message, exitCode } = explainError(error);
    if (message !== undefined) io.err(`dynamodb-lock: ${message}\n`);
    return exitCode;
  }
}

function findCommand(name: string): Command {
  const command = COMMANDS.find((candidate) => candidate.name === name);
  if (command === undefined)
    throw new UsageError(`unknown command ${JSON.stringify(name)}; the commands are ${COMMANDS.map((c) => c.name).join(', ')}`);
  return command;
}

/** `dynamodb-lock`, `dynamodb-lock --help`, `dynamodb-lock help [COMMAND]`. */
function showHelp(line: CommandLine, io: CliIO): number {
  const topic = line.command === 'help' ? line.positionals[0] : undefined;
  if (topic !== undefined) {
    io.out(commandHelp(findCommand(topic)));
    return 0;
  }
  if (line.command === undefined && !line.flags.boolean('help')) {
    io.err(generalHelp(COMMANDS));
    return 2;
  }
  io.out(generalHelp(COMMANDS));
  return 0;
}

function checkUsage(command: Command, line: CommandLine): void {
  const allowed = new Set([...CONNECTION_FLAGS, ...command.flags]);
  const foreign = line.flags.given().find((flag) => !allowed.has(flag));
  if (foreign !== undefined) {
    const takers = COMMANDS.filter((candidate) => candidate.flags.includes(foreign)).map((candidate) => candidate.name);
    const elsewhere = takers.length === 0 ? '' : ` (the commands with --${foreign}: ${takers.join(', ')})`;
    throw new UsageError(`--${foreign} does not apply to ${command.name}${elsewhere}`, command.name);
  }
  const { min, max, names } = command.arguments;
  const count = line.positionals.length;
  if (count < min) throw new UsageError(`${command.name} needs ${names}`, command.name);
  if (count > max) {
    const extra = line.positionals
      .slice(max)
      .map((arg) => JSON.stringify(arg))
      .join(' ');
    throw new UsageError(`${command.name} takes ${max === 0 ? 'no arguments' : names}; unexpected ${extra}`, command.name);
  }
  if (line.hasCommandArgv && command !== runCommand) throw new UsageError(`only run takes a command after --`, command.name);
}

async function execute(command: Command, line: CommandLine, io: CliIO): Promise<number> {
  const settings = connectionSettings(line.flags);
  const interrupt = new AbortController();
  // `run` passes signals on to its command; the others stop their work, and a second signal ends the process at once.
  const signals = command.handlesSignals
    ? undefined
    : new SignalRelay(INTERRUPTING_SIGNALS, (signal) => {
        if (interrupt.signal.aborted) process.exit(signalExitCode(signal));
        interrupt.abort(new InterruptedError(signal));
      });
  const context: CommandContext = {
    io,
    flags: line.flags,
    positionals: line.positionals,
    commandArgv: line.commandArgv,
    lease: settings.lease,
    interrupted: interrupt.signal,
    connect: (options) => connect(settings, io, { signal: interrupt.signal, ...options }),
  };
  try {
    return await command.run(context);
  } catch (error) {
    // An interrupted call fails with whatever the SDK makes of the abort; the signal is the real story.
    throw interrupt.signal.aborted ? interrupt.signal.reason : error;
  } finally {
    signals?.dispose();
  }
}
