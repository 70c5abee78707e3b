/** A yes/no question on the terminal; anything but "y" or "yes" is a no, and so is the end of input (Ctrl-D). */
import { createInterface } from 'node:readline';
import type { CliIO } from './io.js';

export function confirm(io: CliIO, question: string, signal?: AbortSignal): Promise<boolean> {
  const lines = createInterface({ input: io.stdin, terminal: false });
  io.err(`${question} [y/N] `);
  return new Promise<boolean>((resolve, reject) => {
    let settled = false;
    // Closing the interface emits 'close' at once: whatever settles first is the outcome, later ones change nothing.
    const settle = (outcome: () => void): void => {
      if (settled) return;
      settled = true;
      signal?.removeEventListener('abort', onAbort);
      outcome();
      lines.close();
    };
    const onAbort = (): void => settle(() => reject(signal?.reason));
    lines.once('line', (line) => settle(() => resolve(/^\s*y(es)?\s*$/i.test(line))));
    lines.once('close', () => settle(() => resolve(false)));
    if (signal?.aborted) onAbort();
    else signal?.addEventListener('abort', onAbort, { once: true });
  });
}
