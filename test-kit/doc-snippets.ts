/**
 * What users copy must be what runs: the lines of a document's TypeScript
 * snippet (the first after `heading`) that a program's source does not
 * contain. Lines are compared trimmed, blank ones skipped.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { REPO_ROOT } from './processes.js';

export interface SnippetCheck {
  /** The snippet's non-blank lines, trimmed. */
  readonly lines: string[];
  /** Those the program does not contain. */
  readonly missing: string[];
}

/** `document` and `program`: paths from the repository's root; `heading`: the Markdown heading line before the snippet. */
export function snippetAgainstProgram(document: string, heading: string, program: string): SnippetCheck {
  const text = readFileSync(join(REPO_ROOT, document), 'utf8');
  const start = text.indexOf(`${heading}\n`);
  const snippet = start < 0 ? '' : (/```ts\n([\s\S]*?)```/.exec(text.slice(start))?.[1] ?? '');
  const source = readFileSync(join(REPO_ROOT, program), 'utf8');
  const lines = snippet
    .split('\n')
    .map((line) => line.trim())
    .filter((line) => line !== '');
  return { lines, missing: lines.filter((line) => !source.includes(line)) };
}
