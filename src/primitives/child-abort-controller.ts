/**
 * An AbortController that also aborts when a parent signal does. `dispose()`
 * detaches it from the parent, so long-lived parents do not collect a
 * listener per call. The children of one parent share one listener on it:
 * a signal that bounds a burst of calls (README's advice) carries one
 * listener however many calls follow it, and Node sees no listener leak.
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

/** The live children of a parent signal, and the one listener that aborts them all. */
interface Family {
  readonly children: Set<Child>;
  readonly onAbort: () => void;
}

const families = new WeakMap<AbortSignal, Family>();

function adopt(parent: AbortSignal, child: Child): void {
  let family = families.get(parent);
  if (family === undefined) {
    const children = new Set<Child>();
    const onAbort = (): void => {
      families.delete(parent);
      for (const each of children) each.abort(parent.reason);
    };
    family = { children, onAbort };
    families.set(parent, family);
    parent.addEventListener('abort', onAbort, { once: true });
  }
  family.children.add(child);
}

function release(parent: AbortSignal, child: Child): void {
  const family = families.get(parent);
  if (family === undefined || !family.children.delete(child) || family.children.size > 0) return;
  families.delete(parent);
  parent.removeEventListener('abort', family.onAbort);
}

/** A class, not closures: one is made per call, most often without a parent. */
class Child implements ChildAbortController {
  readonly #controller = new AbortController();
  readonly #parent: AbortSignal | undefined;

  constructor(parent: AbortSignal | undefined) {
    if (parent === undefined) return;
    if (parent.aborted) {
      this.#controller.abort(parent.reason);
      return;
    }
    this.#parent = parent;
    adopt(parent, this);
  }

  get signal(): AbortSignal {
    return this.#controller.signal;
  }

  abort(reason?: unknown): void {
    this.#controller.abort(reason);
  }

  dispose(): void {
    if (this.#parent !== undefined) release(this.#parent, this);
  }
}
