/**
 * An AbortController that also aborts when a parent signal does. `dispose()`
 * detaches it from the parent, so long-lived parents do not collect a
 * listener per call.
 */
export interface ChildAbortController {
  readonly signal: AbortSignal;
  abort(reason?: unknown): void;
  /** Detaches from the parent signal. */
  dispose(): void;
}

export function childAbortController(parent: AbortSignal | undefined): ChildAbortController {
  return new Child(parent);
}

/** A class, not closures: one is made per call, most often without a parent. */
class Child implements ChildAbortController {
  readonly #controller = new AbortController();
  readonly #parent: AbortSignal | undefined;
  readonly #onParentAbort: (() => void) | undefined;

  constructor(parent: AbortSignal | undefined) {
    this.#parent = parent;
    if (parent === undefined) return;
    if (parent.aborted) {
      this.#controller.abort(parent.reason);
      return;
    }
    this.#onParentAbort = () => this.#controller.abort(parent.reason);
    parent.addEventListener('abort', this.#onParentAbort, { once: true });
  }

  get signal(): AbortSignal {
    return this.#controller.signal;
  }

  abort(reason?: unknown): void {
    this.#controller.abort(reason);
  }

  dispose(): void {
    if (this.#onParentAbort !== undefined) this.#parent?.removeEventListener('abort', this.#onParentAbort);
  }
}
