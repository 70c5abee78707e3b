/**
 * What an interrupted command exits with, as the exit-code table says
 * (src/cli/exit-codes.ts): 128 + the signal's number, except `watch`, whose
 * normal end is an interruption: 0, also before its first read. The
 * commands wait on an endpoint that never answers, so the signal comes while
 * they work.
 */
import { afterEach, beforeEach, describe, expect, it } from '@jest/globals';
import { localEndpoint } from '../../test-kit/aws.js';
import { CliProcess } from '../../test-kit/cli-process.js';
import { FaultProxy } from '../../test-kit/fault-proxy.js';
import { waitUntil } from '../../test-kit/test-locks.js';

let proxy: FaultProxy;
const started: CliProcess[] = [];

beforeEach(async () => {
  proxy = await FaultProxy.start(localEndpoint());
  proxy.blackhole();
});

afterEach(async () => {
  for (const cli of started.splice(0)) cli.kill();
  await proxy.close();
});

async function interrupted(args: readonly string[], signal: NodeJS.Signals): Promise<number | null> {
  const [command, ...rest] = args;
  const cli = new CliProcess([command as string, '--endpoint', proxy.endpoint, '--table', 'locks', ...rest]);
  started.push(cli);
  await waitUntil('its first request', () => proxy.exchanges.length > 0, { timeoutMs: 20_000 });
  cli.child.kill(signal);
  return (await cli.exited).code;
}

describe('interrupted by a signal', () => {
  it.each<[string[], NodeJS.Signals, number]>([
    [['list'], 'SIGINT', 130],
    [['get', 'job'], 'SIGTERM', 143],
    [['release', 'job', '--force', '--yes'], 'SIGHUP', 129],
    [['run', '--wait', 'job', '--', 'true'], 'SIGINT', 130],
    [['watch', 'job'], 'SIGINT', 0],
    [['watch', 'job'], 'SIGTERM', 0],
  ])(
    '%j on %s exits with %d',
    async (args, signal, code) => {
      expect(await interrupted(args, signal)).toBe(code);
    },
    30_000,
  );
});
