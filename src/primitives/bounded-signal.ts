/**
 * A signal for one request: it follows the caller's signal and also aborts,
 * with a `TimeoutError`, once the request has gone unanswered for its bound.
 * `timeout` tells the two apart afterwards: an abandoned request may have
 * been applied, which the caller must treat as a reply lost, not as its own
 * abort.
 */
import { childAbortController, type ChildAbortController } from './child-abort-controller.js';

export interface BoundedSignal {
  readonly signal: AbortSignal;
  /** The bound's `TimeoutError` when the bound, not the caller's signal, ended the request. */
  readonly timeout: DOMException | undefined;
  /** Stops the timer and detaches from the caller's signal; call it once the request settled. */
  dispose(): void;
}

export function boundedSignal(boundMs: number, signal: AbortSignal | undefined): BoundedSignal {
  return new Bound(boundMs, signal);
}

/** A class, not closures: one is made per request. */
class Bound implements BoundedSignal {
  readonly #parent: AbortSignal | undefined;
  readonly #child: ChildAbortController;
  readonly #timer: NodeJS.Timeout;

  constructor(boundMs: number, parent: AbortSignal | undefined) {
    this.#parent = parent;
    const child = childAbortController(parent);
    this.#child = child;
    this.#timer = setTimeout(
      () => child.abort(new DOMException(`no answer within ${Math.ceil(boundMs)} ms: the request was abandoned`, 'TimeoutError')),
      Math.max(1, Math.ceil(boundMs)),
    );
    this.#timer.unref();
  }

  get signal(): AbortSignal {
    return this.#child.signal;
  }

  get timeout(): DOMException | undefined {
    return this.#child.signal.aborted && this.#parent?.aborted !== true ? (this.#child.signal.reason as DOMException) : undefined;
  }

  dispose(): void {
    clearTimeout(this.#timer);
    this.#child.dispose();
  }
}
