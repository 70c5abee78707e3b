import { describe, expect, it } from '@jest/globals';
import { parseCommandLine } from '../../src/cli/flags.js';

describe('parseCommandLine', () => {
  it('leaves everything after the first -- to the command, flags included', () => {
    const line = parseCommandLine(['run', '--table', 'locks', 'job', '--', 'sh', '-c', 'echo --help', '--', '--wait']);
    expect(line.command).toBe('run');
    expect(line.positionals).toEqual(['job']);
    expect(line.commandArgv).toEqual(['sh', '-c', 'echo --help', '--', '--wait']);
    expect(line.flags.string('table')).toBe('locks');
    expect(line.flags.boolean('wait')).toBe(false);
  });
});
