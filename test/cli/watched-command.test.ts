import { describe, expect, it } from '@jest/globals';
import { runExitCode } from '../../src/cli/watched-command.js';

describe('exit codes', () => {
  it("of run: the command's own, 128 + signal, 126/127 when it cannot start, 1 unwatched, 76 whenever the lock was lost", () => {
    const exited = (code: number | null, signal: NodeJS.Signals | null) => ({ kind: 'exited', code, signal, expired: false }) as const;
    expect(runExitCode(exited(0, null), false)).toBe(0);
    expect(runExitCode(exited(7, null), false)).toBe(7);
    expect(runExitCode(exited(null, 'SIGTERM'), false)).toBe(143);
    expect(runExitCode(exited(null, 'SIGKILL'), false)).toBe(137);
    expect(runExitCode({ kind: 'not-started', code: 'ENOENT', message: 'spawn nope ENOENT' }, false)).toBe(127);
    expect(runExitCode({ kind: 'not-started', code: 'EACCES', message: 'spawn ./x EACCES' }, false)).toBe(126);
    expect(runExitCode({ kind: 'unwatched', message: 'the watchdog process ended' }, false)).toBe(1);
    expect(runExitCode(exited(0, null), true)).toBe(76);
    expect(runExitCode(exited(null, 'SIGKILL'), true)).toBe(76);
  });
});
