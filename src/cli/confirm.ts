/** A yes/no question on the terminal; anything but "y" or "yes" is a no. */
import { createInterface } from 'node:readline';
import type { CliIO } from './io.js';

export function confirm(io: CliIO, question: string, signal?: AbortSignal): Promise<boolean> {
  const lines = createInterface({ input: io.stdin, terminal: false });
  io.err(`${question} [y/N] `);
  return new Promise<boolean>((resolve, reject) => {
    const finish = (answer: boolean): void => {
      signal?.removeEventListener('abort', onAbort);
      lines.close();
      resolve(answer);
    };
    const onAbort = (): void => {
      lines.close();
      reject(signal?.reason);
    };
    lines.once('line', (line) => finish(/^\s*y(es)?\s*$/i.test(line)));
    lines.once('close', () => finish(false));
    signal?.addEventListener('abort', onAbort, { once: true });
  });
}
