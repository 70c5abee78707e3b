/**
 * The demo's output: one line per event, stamped with the seconds since the
 * demo started, and on a terminal a status line below them that is redrawn
 * after each event. Without a terminal (CI logs, a pipe) there are only the
 * event lines, with no cursor control.
 */
const CLEAR_LINE = '\r\u001b[K';

export class TerminalView {
  readonly #out: NodeJS.WriteStream;
  readonly #live: boolean;
  readonly #startedAt = performance.now();
  #status = '';

  constructor(out: NodeJS.WriteStream = process.stdout) {
    this.#out = out;
    this.#live = out.isTTY === true;
  }

  /** Seconds since the demo started, for the stamp and for measurements shown. */
  elapsed(): number {
    return (performance.now() - this.#startedAt) / 1_000;
  }

  line(who: string, text: string): void {
    const stamp = `${this.elapsed().toFixed(2).padStart(6)}s`;
    this.#write(`${this.#live ? CLEAR_LINE : ''}${stamp}  ${who.padEnd(9)} ${text}\n`);
    this.#drawStatus();
  }

  /** Replaces the status line (shown on a terminal only). */
  status(text: string): void {
    if (text === this.#status) return;
    this.#status = text;
    if (this.#live) this.#write(CLEAR_LINE);
    this.#drawStatus();
  }

  /** Removes the status line, leaving the cursor at the start of an empty line. */
  close(): void {
    if (this.#live && this.#status !== '') this.#write(CLEAR_LINE);
    this.#status = '';
  }

  #drawStatus(): void {
    if (!this.#live || this.#status === '') return;
    // A status line wider than the terminal would wrap, and clearing it would leave its first part behind.
    const width = Math.max(10, (this.#out.columns || 80) - 3);
    const text = this.#status.length > width ? `${this.#status.slice(0, width - 1)}…` : this.#status;
    this.#write(`\u001b[7m ${text} \u001b[0m`);
  }

  #write(text: string): void {
    this.#out.write(text);
  }
}
