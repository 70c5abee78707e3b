/**
 * Runs the real `dynamodb-lock` CLI as a child process against the DynamoDB
 * Local of the test run, configured the way a user would: AWS environment
 * variables and flags. Inside jest it runs the CLI compiled for the run
 * (./built-cli.ts); elsewhere, src/cli/main.ts through tsx.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { localEndpoint } from './aws.js';
import { BUILT_CLI_ENV } from './built-cli.js';
import { isRunning, REPO_ROOT } from './processes.js';

/** The node arguments that start the CLI. */
function cliNodeArgs(): string[] {
  const built = process.env[BUILT_CLI_ENV];
  return built ? [built] : ['--import', 'tsx', fileURLToPath(new URL('../src/cli/main.ts', import.meta.url))];
}

export interface CliResult {
  readonly code: number | null;
  readonly signal: NodeJS.Signals | null;
  readonly stdout: string;
  readonly stderr: string;
}

/** The AWS environment of a user pointed at DynamoDB Local; `endpointFromEnv` puts the endpoint in AWS_ENDPOINT_URL_DYNAMODB. */
export function cliEnvironment(options: { endpointFromEnv?: boolean } = {}): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    AWS_REGION: 'us-east-1',
    AWS_ACCESS_KEY_ID: 'cli',
    AWS_SECRET_ACCESS_KEY: 'cli',
  };
  delete env['AWS_PROFILE'];
  if (options.endpointFromEnv) env['AWS_ENDPOINT_URL_DYNAMODB'] = localEndpoint();
  return env;
}

export interface CliProcessOptions {
  readonly env?: NodeJS.ProcessEnv;
  /**
   * Run it at a pseudo-terminal, as an operator's shell would (through
   * util-linux `script`): its stdin, stdout and stderr are the terminal, whose
   * output, echo of what is typed included, arrives on `stdout` with `\r\n`
   * turned back into `\n`; `type` writes to its keyboard.
   */
  readonly terminal?: boolean;
}

/** `'arg'` for `sh -c`. */
const shellQuote = (arg: string): string => `'${arg.replace(/'/g, `'\\''`)}'`;

/** The command line that runs the CLI with `args`, quoted for `sh -c`. */
export function cliShellCommand(args: readonly string[]): string {
  return [process.execPath, ...cliNodeArgs(), ...args].map(shellQuote).join(' ');
}

/** A CLI process that runs in the background; the test reads its output as it comes. */
export class CliProcess {
  readonly child: ChildProcess;
  readonly exited: Promise<CliResult>;
  #stdout = '';
  #stderr = '';

  constructor(args: readonly string[], options: CliProcessOptions = {}) {
    const env = options.env ?? cliEnvironment();
    this.child = options.terminal
      ? // -q: no banner; -e: its exit code is the CLI's; -f: output as it comes.
        spawn('script', ['-qefc', `exec ${cliShellCommand(args)}`, '/dev/null'], {
          cwd: REPO_ROOT,
          env: { ...env, SHELL: '/bin/sh' },
          stdio: 'pipe',
        })
      : spawn(process.execPath, [...cliNodeArgs(), ...args], { cwd: REPO_ROOT, env, stdio: 'pipe' });
    const fromTerminal = options.terminal ? (text: string) => text.replace(/\r\n/g, '\n') : (text: string) => text;
    this.child.stdout?.on('data', (chunk: Buffer) => (this.#stdout += fromTerminal(chunk.toString('utf8'))));
    this.child.stderr?.on('data', (chunk: Buffer) => (this.#stderr += chunk.toString('utf8')));
    this.exited = new Promise((resolve) => {
      this.child.once('close', (code, signal) => resolve({ code, signal, stdout: this.#stdout, stderr: this.#stderr }));
    });
  }

  get stdout(): string {
    return this.#stdout;
  }
  get stderr(): string {
    return this.#stderr;
  }

  /** Writes `text` to its stdin (its keyboard, at a terminal). */
  type(text: string): void {
    this.child.stdin?.write(text);
  }

  /** SIGKILLs it unless it has exited. Never throws. */
  kill(): void {
    if (isRunning(this.child)) this.child.kill('SIGKILL');
  }
}

/** Runs the CLI to the end; SIGKILLs it after `timeoutMs` (the result then shows the signal). */
export async function runCli(args: readonly string[], options: { env?: NodeJS.ProcessEnv; timeoutMs?: number } = {}): Promise<CliResult> {
  const cli = new CliProcess(args, { env: options.env });
  const timer = setTimeout(() => cli.kill(), options.timeoutMs ?? 30_000);
  try {
    return await cli.exited;
  } finally {
    clearTimeout(timer);
    cli.kill();
  }
}
