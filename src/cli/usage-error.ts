/** The command line itself is wrong: unknown flag, missing argument, bad value. Exit code 2. */
export class UsageError extends Error {
  override name = 'UsageError';
  /** The command whose help to point at, if known. */
  readonly command: string | undefined;
  constructor(message: string, command?: string) {
    super(message);
    this.command = command;
  }
}

/** The CLI was stopped by a signal while it worked. Exit code 128 + the signal's number. */
export class InterruptedError extends Error {
  override name = 'InterruptedError';
  readonly signal: NodeJS.Signals;
  constructor(signal: NodeJS.Signals) {
    super(`interrupted by ${signal}`);
    this.signal = signal;
  }
}

/** Something a command needs is missing on this machine (a package, a program). Exit code 1; the message says what to install. */
export class SetupError extends Error {
  override name = 'SetupError';
}
