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
  const controller = new AbortController();
  const onParentAbort = (): void => controller.abort(parent?.reason);
  if (parent?.aborted) controller.abort(parent.reason);
  else parent?.addEventListener('abort', onParentAbort, { once: true });
  return {
    signal: controller.signal,
    abort: (reason) => controller.abort(reason),
    dispose: () => parent?.removeEventListener('abort', onParentAbort),
  };
}
