/**
 * `npm start` runs demo/demo.ts: it must finish by itself within a minute,
 * show the takeover and the hand-over, and stop everything it started, also
 * when its output is not a terminal (CI logs).
 */
import { describe, expect, it } from '@jest/globals';
import { connect } from 'node:net';
import { isRunning, spawnTsx } from '../../test-kit/processes.js';

function refusesConnections(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connect({ host: '127.0.0.1', port });
    socket.once('connect', () => {
      socket.destroy();
      resolve(false);
    });
    socket.once('error', () => resolve(true));
  });
}

describe('the demo (npm start)', () => {
  it('runs to the end by itself with its output in a pipe, and stops its workers and DynamoDB Local', async () => {
    const demo = spawnTsx('demo/demo.ts');
    let output = '';
    demo.stdout?.on('data', (chunk: Buffer) => (output += chunk.toString('utf8')));
    demo.stderr?.on('data', (chunk: Buffer) => (output += chunk.toString('utf8')));
    const timer = setTimeout(() => demo.kill('SIGKILL'), 60_000);
    try {
      const code = await new Promise<number | null>((resolve) => demo.once('close', (exitCode) => resolve(exitCode)));
      expect({ code, output }).toMatchObject({ code: 0 });
    } finally {
      clearTimeout(timer);
      if (isRunning(demo)) demo.kill('SIGKILL');
    }

    expect(output).toMatch(/takeover: worker-\d leads [\d.]+ s after the kill/);
    expect(output).toMatch(/hand-over: worker-\d leads [\d.]+ s after the resignation/);
    expect(output).toContain('never two leaders at the same instant');
    expect(output).toContain('stopped everything it started');
    expect(output).not.toContain('\u001b['); // no cursor control without a terminal
    // Every worker it started is gone.
    const pids = [...output.matchAll(/campaigns \(pid (\d+)/g)].map((match) => Number(match[1]));
    expect(pids).toHaveLength(3);
    for (const pid of pids) expect(isRunning(pid)).toBe(false);
    // DynamoDB Local is gone: its port refuses connections.
    const port = Number(/listens on http:\/\/127\.0\.0\.1:(\d+)/.exec(output)?.[1]);
    expect(port).toBeGreaterThan(0);
    expect(await refusesConnections(port)).toBe(true);
  }, 70_000);
});
