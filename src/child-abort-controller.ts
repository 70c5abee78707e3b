/**
 * An AbortController that also aborts when a parent signal does. `dispose()`
 * detaches it from the parent, so long-lived parents do not collect a
 * listener per call.
 */
export interface ChildAbortController extends Disposable {
  readonly signal: AbortSignal;
  abort(reason?: unknown): void;
}

export function childAbortController(parent: AbortSignal | undefined): ChildAbortController {
  const controller = new AbortController();
  const onParentAbort = (): void => controller.abort(parent?.reason);
  if (parent?.aborted) controller.abort(parent.reason);
  else parent?.addEventListener('abort', onParentAbort, { once: true });
  return {
    signal: controller.signal,
    abort: (reason) => controller.abort(reason),
    [Symbol.dispose]: () => parent?.removeEventListener('abort', onParentAbort),
  };
}
