/**
 * Routes the process's termination signals to one handler that can change
 * over time: while `run` waits for its lock they cancel the wait, while its
 * command runs they are passed on to it. Listening also keeps Node from
 * dying on them, so that cleanup (release, stopping DynamoDB Local) happens.
 */
export class SignalRelay {
  readonly #listeners = new Map<NodeJS.Signals, () => void>();
  #handler: (signal: NodeJS.Signals) => void;

  constructor(signals: readonly NodeJS.Signals[], handler: (signal: NodeJS.Signals) => void) {
    this.#handler = handler;
    for (const signal of signals) {
      const listener = (): void => this.#handler(signal);
      this.#listeners.set(signal, listener);
      process.on(signal, listener);
    }
  }

  set handler(handler: (signal: NodeJS.Signals) => void) {
    this.#handler = handler;
  }

  /** Stops listening; safe to call twice. */
  dispose(): void {
    for (const [signal, listener] of this.#listeners) process.off(signal, listener);
    this.#listeners.clear();
  }
}
