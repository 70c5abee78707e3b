/**
 * An endpoint that answers HTTP but not as DynamoDB (a web server, a proxy's
 * error page, a wrong port): the CLI says so, naming the endpoint and what
 * it answered, instead of a bare `UnknownError`, a JSON parse error or a
 * "table does not exist".
 */
import { afterEach, describe, expect, it } from '@jest/globals';
import { createServer, type Server } from 'node:http';
import { runCli } from '../../test-kit/cli-process.js';

const servers: Server[] = [];

afterEach(async () => {
  await Promise.all(servers.splice(0).map((server) => new Promise((resolve) => server.close(resolve))));
});

/** A plain HTTP server on 127.0.0.1 that gives every request the same answer; its endpoint. */
async function answering(status: number, contentType: string | undefined, body: string): Promise<string> {
  const server = createServer((_request, response) => {
    response.writeHead(status, contentType === undefined ? {} : { 'content-type': contentType });
    response.end(body);
  });
  servers.push(server);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address();
  return `http://127.0.0.1:${typeof address === 'object' && address !== null ? address.port : 0}`;
}

describe('an endpoint that does not answer as DynamoDB', () => {
  it.each<[string, number, string | undefined, string]>([
    ['200 "hello"', 200, 'text/plain', 'hello'],
    ['404 HTML', 404, 'text/html', '<html><body><h1>Not Found</h1></body></html>'],
    ['404 without a body', 404, undefined, ''],
    ['200 "{}"', 200, 'application/json', '{}'],
  ])(
    '%s: says so, with the endpoint and the HTTP status, and exits with 1',
    async (_name, status, contentType, body) => {
      const endpoint = await answering(status, contentType, body);
      for (const args of [['list'], ['get', 'job'], ['run', 'job', '--', 'true']]) {
        const [command, ...rest] = args;
        const result = await runCli([command as string, '--endpoint', endpoint, '--table', 'locks', ...rest]);
        expect(result.stderr).toContain(`${endpoint} did not answer as DynamoDB (HTTP ${status}`);
        expect(result.code).toBe(1);
      }
    },
    60_000,
  );
});
