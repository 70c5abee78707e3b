/** A signal that aborts after `ms` (rounded up to a whole millisecond, at least 1); its timer never keeps the process alive. */
export function deadlineSignal(ms: number): AbortSignal {
  return AbortSignal.timeout(Math.max(1, Math.ceil(ms)));
}
