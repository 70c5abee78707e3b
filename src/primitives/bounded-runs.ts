/**
 * Runs started one after another with at most `limit()` of them under way:
 * `add` waits for a free place before it starts its run. The limit is read
 * again at each start, so that it can shrink while runs are under way.
 * Runs must not reject: each settles its own outcome.
 */
export class BoundedRuns {
  readonly #limit: () => number;
  readonly #running = new Set<Promise<void>>();

  constructor(limit: () => number) {
    this.#limit = limit;
  }

  /** Starts `run` once fewer than the limit are under way; resolves when it has started. */
  async add(run: () => Promise<void>): Promise<void> {
    while (this.#running.size >= Math.max(1, this.#limit())) await Promise.race(this.#running);
    const running = run().finally(() => this.#running.delete(running));
    this.#running.add(running);
  }

  /** Resolves once every run started has settled. */
  async settled(): Promise<void> {
    await Promise.all(this.#running);
  }
}
