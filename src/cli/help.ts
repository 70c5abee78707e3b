/** The text of `--help`: the command list, each command's usage, flags, exit codes and examples. */
import type { Command } from './command.js';
import { DURATION_SYNTAX } from './durations.js';
import { EXIT_CODES } from './exit-codes.js';
import { CONNECTION_FLAGS, FLAGS, type FlagName, type FlagSpec } from './flags.js';

const PROGRAM = 'dynamodb-lock';

function flagLines(names: readonly FlagName[]): string[] {
  const left = names.map((name) => {
    const spec: FlagSpec = FLAGS[name];
    const short = spec.short === undefined ? '    ' : `-${spec.short}, `;
    return `${short}--${name}${spec.value === undefined ? '' : ` ${spec.value}`}`;
  });
  const width = Math.max(...left.map((text) => text.length));
  return names.map((name, i) => `  ${(left[i] as string).padEnd(width)}  ${FLAGS[name].description}`);
}

function codeLines(codes: readonly (readonly [string, string])[]): string[] {
  const width = Math.max(...codes.map(([code]) => code.length));
  return codes.map(([code, meaning]) => `  ${code.padEnd(width)}  ${meaning}`);
}

/** The common exit codes, each replaced by the command's own wording where it gives one, then the command's others. */
function commandCodes(command: Command): (readonly [string, string])[] {
  const own = new Map(command.exitCodes);
  return [
    ...COMMON_EXIT_CODES.map(([code, meaning]) => [code, own.get(code) ?? meaning] as const),
    ...command.exitCodes.filter(([code]) => !COMMON_EXIT_CODES.some(([common]) => common === code)),
  ];
}

const COMMON_EXIT_CODES: readonly (readonly [string, string])[] = [
  ['0', 'success'],
  ['1', 'error: DynamoDB unreachable or throttled, credentials missing or refused, table missing, …'],
  ['2', 'usage error: unknown flag, missing argument, bad value'],
];

export function generalHelp(commands: readonly Command[]): string {
  const width = Math.max(...commands.map((command) => command.name.length));
  return [
    `${PROGRAM}: locks on DynamoDB for operators and scripts, compatible with the Java DynamoDB Lock Client`,
    '',
    `Usage: ${PROGRAM} COMMAND [ARGUMENTS] --table NAME [FLAGS]`,
    '',
    'Commands:',
    ...commands.map((command) => `  ${command.name.padEnd(width)}  ${command.summary}`),
    '',
    'Flags of every command:',
    ...flagLines([...CONNECTION_FLAGS, 'version']),
    '',
    'Region, credentials and endpoint also come from the standard AWS environment (AWS_REGION,',
    'AWS_PROFILE, AWS_ACCESS_KEY_ID, AWS_ENDPOINT_URL_DYNAMODB, ~/.aws/config, instance roles, …).',
    DURATION_SYNTAX,
    '',
    'Exit codes:',
    ...codeLines(EXIT_CODES),
    '',
    `Run "${PROGRAM} COMMAND --help" for a command's flags and examples.`,
    '',
  ].join('\n');
}

export function commandHelp(command: Command): string {
  return [
    `Usage: ${PROGRAM} ${command.name} --table NAME [FLAGS]${command.synopsis === '' ? '' : ` ${command.synopsis}`}`,
    '',
    command.summary.charAt(0).toUpperCase() + command.summary.slice(1) + '.',
    '',
    command.description,
    ...(command.flags.length === 0 ? [] : ['', 'Flags:', ...flagLines(command.flags)]),
    '',
    'Flags of every command:',
    ...flagLines(CONNECTION_FLAGS),
    ...([...command.flags, ...CONNECTION_FLAGS].some((name) => (FLAGS[name] as FlagSpec).value === 'DURATION') ? ['', DURATION_SYNTAX] : []),
    '',
    'Exit codes:',
    ...codeLines(commandCodes(command)),
    '',
    'Examples:',
    ...command.examples.map((example) => `  ${example}`),
    '',
  ].join('\n');
}
