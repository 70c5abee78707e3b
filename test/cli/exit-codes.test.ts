/**
 * One list of exit codes: `dynamodb-lock --help`, each command's `--help`
 * and the table of docs/cli.md say what src/cli/exit-codes.ts says, so that
 * they cannot drift apart. (What the processes really exit with:
 * integration/cli/interrupted.test.ts and the other CLI tests.)
 */
import { describe, expect, it } from '@jest/globals';
import { readFileSync } from 'node:fs';
import { COMMANDS } from '../../src/cli/cli.js';
import { EXIT_CODES } from '../../src/cli/exit-codes.js';
import { commandHelp, generalHelp } from '../../src/cli/help.js';

type Row = readonly [code: string, meaning: string];

/** The rows under "Exit codes:" of a help text. */
function helpRows(help: string): Row[] {
  const section = help.split('\nExit codes:\n')[1]?.split('\n\n')[0] ?? '';
  return section.split('\n').map((line) => line.trim().split(/\s{2,}/) as unknown as Row);
}

/** The rows of the table under a heading of a Markdown file, without the code spans' backticks. */
function markdownRows(file: string, heading: string): Row[] {
  const text = readFileSync(new URL(`../../${file}`, import.meta.url), 'utf8');
  const section = text.split(`\n${heading}\n`)[1]?.split('\n## ')[0] ?? '';
  return section
    .split('\n')
    .filter((line) => line.startsWith('|'))
    .slice(2)
    .map(
      (line) =>
        line
          .replace(/`/g, '')
          .split('|')
          .slice(1, -1)
          .map((cell) => cell.trim()) as unknown as Row,
    );
}

describe('exit codes', () => {
  it('docs/cli.md lists every exit code with the meaning the exit codes module gives', () => {
    expect(markdownRows('docs/cli.md', '## Exit codes')).toEqual(EXIT_CODES);
  });

  it('dynamodb-lock --help lists every exit code with the same meaning', () => {
    expect(helpRows(generalHelp(COMMANDS))).toEqual(EXIT_CODES);
  });

  it.each(COMMANDS.map((command) => [command.name]))(
    '%s --help has only codes of the module, which names the command where its help has words of its own',
    (name) => {
      const command = COMMANDS.find((candidate) => candidate.name === name);
      const meaningOf = new Map(EXIT_CODES);
      const shown = helpRows(commandHelp(command as (typeof COMMANDS)[number]));
      for (const [code] of shown) expect(meaningOf.has(code)).toBe(true);
      for (const [code] of command?.exitCodes ?? []) expect(meaningOf.get(code)).toMatch(new RegExp(`(^|[ ,;])${name}[ ,:]`));
    },
  );
});
