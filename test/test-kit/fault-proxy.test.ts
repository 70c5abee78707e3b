/**
 * The fault proxy of the integration tests, against a plain HTTP server on
 * loopback: each fault must really happen (or the integration tests that
 * rely on it would prove nothing), and close() must leave nothing open.
 */
import { afterEach, beforeEach, describe, expect, it } from '@jest/globals';
import { Agent, createServer, request as httpRequest, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { dynamoDBErrorReply, FaultProxy, type DynamoDBErrorKind, operationOf } from '../../test-kit/fault-proxy.js';

/** Requests the upstream server received, by body. */
let received: string[];
let upstream: Server;
let proxy: FaultProxy;
let agent: Agent;

beforeEach(async () => {
  received = [];
  upstream = createServer((req, res) => {
    let body = '';
    req.on('data', (chunk: Buffer) => (body += chunk.toString('utf8')));
    req.on('end', () => {
      received.push(body);
      if (body === 'no reply') return; // a server that never answers this one
      res.setHeader('content-type', 'application/json');
      res.end(JSON.stringify({ echo: body }));
    });
  });
  await new Promise<void>((resolve) => upstream.listen({ host: '127.0.0.1', port: 0 }, resolve));
  proxy = await FaultProxy.start(`http://127.0.0.1:${(upstream.address() as AddressInfo).port}`);
  // Keep-alive, one socket: requests share a connection as the AWS SDK's do.
  agent = new Agent({ keepAlive: true, maxSockets: 1 });
});

afterEach(async () => {
  agent.destroy();
  await proxy.close();
  upstream.closeAllConnections();
  await new Promise<void>((resolve) => upstream.close(() => resolve()));
});

interface Reply {
  readonly status: number;
  readonly body: string;
}

/** POSTs `body` through the proxy as DynamoDB operation `operation`; rejects on a network error or after `timeoutMs`. */
function send(operation: string, body: string, timeoutMs = 5_000): Promise<Reply> {
  const { port } = new URL(proxy.endpoint);
  return new Promise((resolve, reject) => {
    const req = httpRequest(
      {
        host: '127.0.0.1',
        port: Number(port),
        method: 'POST',
        path: '/',
        agent,
        headers: { 'x-amz-target': `DynamoDB_20120810.${operation}`, 'content-type': 'application/x-amz-json-1.0' },
      },
      (res: IncomingMessage) => {
        let text = '';
        res.on('data', (chunk: Buffer) => (text += chunk.toString('utf8')));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, body: text }));
        res.on('error', reject);
      },
    );
    req.setTimeout(timeoutMs, () => req.destroy(Object.assign(new Error('client timeout'), { code: 'CLIENT_TIMEOUT' })));
    req.on('error', reject);
    req.end(body);
  });
}

const failureOf = (promise: Promise<unknown>): Promise<NodeJS.ErrnoException> =>
  promise.then(
    () => {
      throw new Error('expected the request to fail');
    },
    (error: unknown) => error as NodeJS.ErrnoException,
  );

describe('FaultProxy', () => {
  it('passes requests and replies through, cutting a keep-alive stream into requests by target', async () => {
    expect(await send('GetItem', '{"n":1}')).toEqual({ status: 200, body: '{"echo":"{\\"n\\":1}"}' });
    expect((await send('PutItem', '{"n":2}')).status).toBe(200);

    expect(received).toEqual(['{"n":1}', '{"n":2}']);
    expect(proxy.exchanges.map((e) => operationOf(e.request))).toEqual(['GetItem', 'PutItem']);
    expect(proxy.exchanges.map((e) => e.request.body.toString('utf8'))).toEqual(['{"n":1}', '{"n":2}']);
    // Both came over the same client connection, so the parser really found the boundary between them.
    expect(proxy.exchanges[0]?.request.connection).toBe(proxy.exchanges[1]?.request.connection);
  });

  it('tells how long the server took to start each reply, and how long a request had waited when the client gave up on it', async () => {
    const heard: { body: string; answered: boolean; ms: number }[] = [];
    proxy.onServerReply = (request, ms, answered) => heard.push({ body: request.body.toString('utf8'), answered, ms });
    await send('GetItem', '{"n":1}');
    expect((await failureOf(send('GetItem', 'no reply', 300))).code).toBe('CLIENT_TIMEOUT');
    await new Promise((resolve) => setTimeout(resolve, 50));
    expect(heard.map(({ body, answered }) => ({ body, answered }))).toEqual([
      { body: '{"n":1}', answered: true },
      { body: 'no reply', answered: false },
    ]);
    expect(heard[1]?.ms).toBeGreaterThanOrEqual(250);
  });

  it('adds latency to every request and still delivers them in order', async () => {
    proxy.addLatency(50);
    const replies = await Promise.all([send('GetItem', 'a'), send('GetItem', 'b')]);
    expect(replies.map((r) => r.status)).toEqual([200, 200]);
    expect(received).toEqual(['a', 'b']);
    expect(proxy.exchanges.map((e) => e.fault)).toEqual([
      { action: 'forward', delayMs: 50 },
      { action: 'forward', delayMs: 50 },
    ]);
  });

  it('drops the reply of the matching request after the server applied it, and only that one', async () => {
    await send('GetItem', 'before'); // opens the keep-alive connection the dropped request will use
    const dropped = proxy.dropNextReply((request) => operationOf(request) === 'UpdateItem');
    await send('GetItem', 'not matching');

    const error = await failureOf(send('UpdateItem', 'applied'));
    const exchange = await dropped;

    expect(error.code).toBe('ECONNRESET');
    expect(received).toContain('applied');
    expect(exchange.request.body.toString('utf8')).toBe('applied');
    expect(exchange.swallowedStatusLine).toBe('HTTP/1.1 200 OK');
    // One drop only: the next UpdateItem is answered.
    expect(await send('UpdateItem', 'again')).toMatchObject({ status: 200 });
  });

  it('blackholes requests: never forwarded, never answered, until passThrough()', async () => {
    proxy.blackhole();
    const error = await failureOf(send('UpdateItem', 'lost', 300));
    expect(error.code).toBe('CLIENT_TIMEOUT');
    expect(received).toEqual([]);
    expect(proxy.exchanges.map((e) => e.fault.action)).toEqual(['blackhole']);

    proxy.passThrough();
    expect((await send('UpdateItem', 'later')).status).toBe(200);
    expect(received).toEqual(['later']);
  });

  it("answers in the server's place with a DynamoDB JSON error, and keeps the connection usable", async () => {
    const answered = proxy.injectOnce(() => true, { action: 'respond', reply: dynamoDBErrorReply('ThrottlingException') });
    const reply = await send('UpdateItem', 'throttled');
    await answered;
    expect(reply.status).toBe(400);
    expect(JSON.parse(reply.body)).toEqual({
      __type: 'com.amazon.coral.availability#ThrottlingException',
      message: expect.any(String),
    });
    expect(received).toEqual([]);

    expect(await send('UpdateItem', 'next')).toMatchObject({ status: 200 });
    expect(received).toEqual(['next']);
    // Same connection: the canned reply was framed exactly, or the next reply would have been misread.
    expect(proxy.exchanges[0]?.request.connection).toBe(proxy.exchanges[1]?.request.connection);
  });

  it("answers in the server's place after a delay, when asked to", async () => {
    const answered = proxy.injectOnce(() => true, { action: 'respond', reply: dynamoDBErrorReply('ThrottlingException'), delayMs: 300 });
    const sentAt = performance.now();
    const reply = await send('UpdateItem', 'throttled late');
    await answered;
    expect(reply.status).toBe(400);
    expect(performance.now() - sentAt).toBeGreaterThanOrEqual(290);
    expect(received).toEqual([]);
  });

  it.each<[DynamoDBErrorKind, number]>([
    ['ProvisionedThroughputExceededException', 400],
    ['InternalServerError', 500],
    ['ServiceUnavailable', 503],
  ])('builds the %s reply with status %d', (kind, status) => {
    const reply = dynamoDBErrorReply(kind);
    expect(reply.status).toBe(status);
    expect(
      (JSON.parse(reply.body) as { __type: string }).__type.endsWith(`#${kind === 'ServiceUnavailable' ? 'ServiceUnavailableException' : kind}`),
    ).toBe(true);
  });

  it('drops a request before forwarding it: the server never sees it', async () => {
    await send('GetItem', 'before');
    const dropped = proxy.injectOnce((request) => operationOf(request) === 'PutItem', { action: 'dropRequest' });
    const error = await failureOf(send('PutItem', 'never applied'));
    await dropped;
    expect(error.code).toBe('ECONNRESET');
    expect(received).toEqual(['before']);
    expect((await send('PutItem', 'again')).status).toBe(200);
  });

  it('refuses new connections while asked to', async () => {
    proxy.refuseConnections();
    const error = await failureOf(send('GetItem', 'refused'));
    expect(error.code).toBe('ECONNRESET');
    expect(proxy.exchanges).toEqual([]);

    proxy.refuseConnections(false);
    expect((await send('GetItem', 'accepted')).status).toBe(200);
    expect(received).toEqual(['accepted']);
  });

  it('resets open connections on demand, and accepts new ones', async () => {
    proxy.blackhole();
    const pending = failureOf(send('GetItem', 'in flight'));
    await new Promise((resolve) => setTimeout(resolve, 50)); // let the request reach the proxy
    proxy.resetOpenConnections();
    expect((await pending).code).toBe('ECONNRESET');

    proxy.passThrough();
    expect((await send('GetItem', 'next')).status).toBe(200);
    expect(received).toEqual(['next']);
  });

  it('refuses a chunked body instead of misreading it', async () => {
    const { port } = new URL(proxy.endpoint);
    const error = await failureOf(
      new Promise((resolve, reject) => {
        const req = httpRequest({ host: '127.0.0.1', port: Number(port), method: 'POST', path: '/', agent }, resolve);
        req.on('error', reject);
        req.write('part one'); // no Content-Length: Node sends the body chunked
        req.end();
      }),
    );
    expect(error.code).toBe('ECONNRESET');
    expect(received).toEqual([]);
  });

  it('close() destroys open connections, stops listening, and may be called twice', async () => {
    proxy.blackhole();
    const pending = failureOf(send('GetItem', 'in flight'));
    await new Promise((resolve) => setTimeout(resolve, 50)); // let the request reach the proxy
    await Promise.all([proxy.close(), proxy.close()]);
    await proxy.close();

    expect((await pending).code).toBe('ECONNRESET');
    expect((await failureOf(send('GetItem', 'after close'))).code).toBe('ECONNREFUSED');
  });
});
