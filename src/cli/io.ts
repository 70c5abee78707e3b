/** Where the CLI reads and writes: the process's streams, or fakes in unit tests. */
export interface CliIO {
  /** Writes to standard output. */
  out(text: string): void;
  /** Writes to standard error. */
  err(text: string): void;
  readonly stdoutIsTTY: boolean;
  readonly stdin: NodeJS.ReadableStream & { readonly isTTY?: boolean };
  /** The environment for commands that `run` starts. */
  readonly env: NodeJS.ProcessEnv;
}

export function processIO(env: NodeJS.ProcessEnv = process.env): CliIO {
  return {
    out: (text) => void process.stdout.write(text),
    err: (text) => void process.stderr.write(text),
    stdoutIsTTY: process.stdout.isTTY === true,
    stdin: process.stdin,
    env,
  };
}
