/**
 * A loopback TCP proxy that sits between a DynamoDB client and DynamoDB Local
 * and injects network faults the lock client must survive: latency, a reply
 * lost after the request was applied, a server that stops answering, and
 * refused connections.
 *
 * It parses just enough HTTP/1.1 to cut the client's byte stream into
 * requests (head up to the blank line, then `Content-Length` bytes of body)
 * and to read each request's `X-Amz-Target`, so that one operation on a
 * keep-alive connection can be singled out. Replies are never parsed: they
 * are streamed back as they come. Like the AWS SDK's Node handler, clients
 * are assumed not to pipeline (one request in flight per connection).
 *
 * What happens to each request is decided by a {@link RequestRule}, settable
 * at run time. That hook is the extension point: a seeded fault schedule is a
 * rule (chaos/fault-schedule.ts), and {@link dynamoDBErrorReply} builds the
 * answers the proxy gives in the server's place (a 500/503, or a throttling
 * error in DynamoDB's JSON error format).
 *
 *   const proxy = await FaultProxy.start(localEndpoint());
 *   try { ...a DynamoDBClient with endpoint proxy.endpoint... } finally { await proxy.close(); }
 */
import { setMaxListeners } from 'node:events';
import { connect, createServer, type Server, type Socket } from 'node:net';

/** One request as the client sent it. */
export interface ProxiedRequest {
  /** Counts requests through this proxy, from 1. */
  readonly seq: number;
  /** Counts client connections, from 1: requests sharing it came over one keep-alive connection. */
  readonly connection: number;
  readonly method: string;
  readonly path: string;
  /** Header names in lower case. */
  readonly headers: Readonly<Record<string, string>>;
  /** The `X-Amz-Target` header, e.g. `DynamoDB_20120810.UpdateItem`. */
  readonly target: string | undefined;
  readonly body: Buffer;
}

/**
 * What to do with one request:
 * - `forward`: pass it to the server (after `delayMs`) and stream the reply back;
 * - `dropReply`: pass it to the server, wait for the server's reply (so the
 *   request was applied), swallow it and destroy the client's connection;
 * - `blackhole`: keep it, never forward it and never answer; the connection
 *   then stays silent until the client gives up;
 * - `dropRequest`: destroy the client's connection without forwarding, so the
 *   request was certainly not applied;
 * - `respond`: answer it in the server's place, without forwarding it, with
 *   `reply` (see {@link dynamoDBErrorReply}), after `delayMs`; the
 *   connection stays usable.
 */
export type RequestFault =
  | { readonly action: 'forward'; readonly delayMs?: number }
  | { readonly action: 'dropReply' }
  | { readonly action: 'blackhole' }
  | { readonly action: 'dropRequest' }
  | { readonly action: 'respond'; readonly reply: CannedReply; readonly delayMs?: number };

/** An HTTP reply the proxy sends instead of the server's. */
export interface CannedReply {
  readonly status: number;
  readonly body: string;
}

/** The error types DynamoDB answers with for overload, outages and missing permissions, with their HTTP status. */
export type DynamoDBErrorKind =
  | 'ProvisionedThroughputExceededException'
  | 'ThrottlingException'
  | 'InternalServerError'
  | 'ServiceUnavailable'
  | 'AccessDeniedException'
  | 'TransactionConflictException';

const ERROR_REPLIES: Readonly<Record<DynamoDBErrorKind, { status: number; type: string; message: string }>> = {
  // The namespaces are the ones DynamoDB puts in `__type`; the SDK reads the part after '#'.
  ProvisionedThroughputExceededException: {
    status: 400,
    type: 'com.amazonaws.dynamodb.v20120810#ProvisionedThroughputExceededException',
    message: 'The level of configured provisioned throughput for the table was exceeded.',
  },
  ThrottlingException: {
    status: 400,
    type: 'com.amazon.coral.availability#ThrottlingException',
    message: 'Rate of requests exceeds the allowed throughput.',
  },
  InternalServerError: {
    status: 500,
    type: 'com.amazonaws.dynamodb.v20120810#InternalServerError',
    message: 'Internal server error',
  },
  // A refusal the SDK does not retry: nothing applied, and the same answer again.
  AccessDeniedException: {
    status: 400,
    type: 'com.amazon.coral.service#AccessDeniedException',
    message: 'User is not authorized to perform this action',
  },
  // A write on an item that an ongoing transaction holds: nothing applied, and the SDK does not retry it.
  TransactionConflictException: {
    status: 400,
    type: 'com.amazonaws.dynamodb.v20120810#TransactionConflictException',
    message: 'Transaction is ongoing for the item',
  },
  ServiceUnavailable: {
    status: 503,
    type: 'com.amazon.coral.availability#ServiceUnavailableException',
    message: 'Service unavailable',
  },
};

/** A DynamoDB error reply in the service's JSON error format (`{"__type", "message"}`). */
export function dynamoDBErrorReply(kind: DynamoDBErrorKind): CannedReply {
  const { status, type, message } = ERROR_REPLIES[kind];
  return { status, body: JSON.stringify({ __type: type, message }) };
}

export type RequestRule = (request: ProxiedRequest) => RequestFault;

/** Refuses every DeleteItem as DynamoDB refuses a role without `dynamodb:DeleteItem`: nothing applied, not retried. */
export const refuseDeletes: RequestRule = (request) =>
  operationOf(request) === 'DeleteItem' ? { action: 'respond', reply: dynamoDBErrorReply('AccessDeniedException') } : FORWARD;

/** A request and what the proxy did with it. */
export interface ProxiedExchange {
  readonly request: ProxiedRequest;
  readonly fault: RequestFault;
  /** For `dropReply`: the status line of the reply that was swallowed, e.g. `HTTP/1.1 200 OK`. */
  swallowedStatusLine?: string;
}

const FORWARD: RequestFault = Object.freeze({ action: 'forward' });
const forwardAll: RequestRule = () => FORWARD;

/** A request head larger than this is not HTTP from the SDK; the connection is dropped. */
const MAX_HEAD_BYTES = 64 * 1024;
const HEAD_END = Buffer.from('\r\n\r\n');

/** The operation name of a DynamoDB request (`UpdateItem`), from its `X-Amz-Target`. */
export function operationOf(request: ProxiedRequest): string | undefined {
  return request.target?.slice(request.target.lastIndexOf('.') + 1);
}

export class FaultProxy {
  /** `http://127.0.0.1:<port>`, for the client's `endpoint`. */
  readonly endpoint: string;
  /** Every request that reached the proxy, in arrival order, with what was done to it. */
  readonly exchanges: ProxiedExchange[] = [];
  readonly #server: Server;
  readonly #upstream: { host: string; port: number };
  readonly #sockets = new Set<Socket>();
  /** Aborted by close(): pending delays end and nothing more is forwarded. */
  readonly #lifetime = new AbortController();
  /** Who waits for a fault to be applied to which request (see injectOnce). */
  readonly #onApplied = new Map<ProxiedRequest, (exchange: ProxiedExchange) => void>();
  /**
   * Hears how long the server took to start its reply to each request the
   * proxy forwarded, in ms, from when the request was passed on (a delay
   * the proxy injected does not count); `answered` false when the
   * connection closed first (the client gave up on the request), with the
   * time it had waited by then.
   */
  onServerReply: ((request: ProxiedRequest, ms: number, answered: boolean) => void) | undefined;
  #rule: RequestRule = forwardAll;
  #refusing = false;
  #connections = 0;
  #requests = 0;
  #closing: Promise<void> | undefined;

  private constructor(server: Server, upstream: { host: string; port: number }) {
    this.#server = server;
    this.#upstream = upstream;
    // Every delayed request listens for close(): hundreds at once under load are expected, not a leak.
    setMaxListeners(0, this.#lifetime.signal);
    const address = server.address();
    if (address === null || typeof address === 'string') throw new Error('the proxy is not listening on TCP');
    this.endpoint = `http://127.0.0.1:${address.port}`;
  }

  /** Listens on 127.0.0.1 on a free port and forwards to `upstream` (an `http://host:port` URL). */
  static async start(upstream: string): Promise<FaultProxy> {
    const url = new URL(upstream);
    if (url.protocol !== 'http:') throw new Error(`the fault proxy speaks plain HTTP only, not ${url.protocol}`);
    const target = { host: url.hostname, port: Number(url.port || 80) };
    const server = createServer();
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen({ host: '127.0.0.1', port: 0 }, () => {
        server.off('error', reject);
        resolve();
      });
    });
    const proxy = new FaultProxy(server, target);
    server.on('connection', (socket) => proxy.#accept(socket));
    return proxy;
  }

  /** Decides what happens to each request from now on (requests already forwarded are not affected). */
  setRule(rule: RequestRule): void {
    this.#rule = rule;
  }

  /** Forward everything at once and accept connections again. */
  passThrough(): void {
    this.#refusing = false;
    this.#rule = forwardAll;
  }

  /** Forward every request `ms` late. */
  addLatency(ms: number): void {
    const delayed: RequestFault = { action: 'forward', delayMs: ms };
    this.#rule = () => delayed;
  }

  /** Never forward or answer any request from now on; connections are still accepted and read. */
  blackhole(): void {
    const silent: RequestFault = { action: 'blackhole' };
    this.#rule = () => silent;
  }

  /** Reset new connections as soon as they are accepted; open ones are left alone. */
  refuseConnections(refuse = true): void {
    this.#refusing = refuse;
  }

  /** Destroys every open connection (a client reusing one sees it fail); new ones are accepted as before. */
  resetOpenConnections(): void {
    for (const socket of this.#sockets) socket.destroy();
  }

  /**
   * Applies `fault` to the next request that `matches`; all other requests
   * follow the rule in force when this was called. Resolves once the fault
   * has been applied (for `dropReply`, once the server's reply was
   * swallowed); a new rule set before that cancels it, and it never resolves.
   */
  injectOnce(matches: (request: ProxiedRequest) => boolean, fault: RequestFault): Promise<ProxiedExchange> {
    const fallback = this.#rule;
    let used = false;
    return new Promise((resolve) => {
      this.#rule = (request) => {
        if (used || !matches(request)) return fallback(request);
        used = true;
        this.#onApplied.set(request, resolve);
        return fault;
      };
    });
  }

  /** Loses the reply of the next request that `matches`, after the server applied it. */
  dropNextReply(matches: (request: ProxiedRequest) => boolean): Promise<ProxiedExchange> {
    return this.injectOnce(matches, { action: 'dropReply' });
  }

  /**
   * Loses the reply of the next request that `matches` (after the server
   * applied it), and meets the AWS SDK's retries of that same call (same
   * `amz-sdk-invocation-id`) with `retries`: forward them, or answer them in
   * the server's place, e.g. with throttling. Resolves once the first reply
   * was swallowed; the retries follow, and show in `exchanges`.
   */
  loseReplyThenRetries(matches: (request: ProxiedRequest) => boolean, retries: RequestFault): Promise<ProxiedExchange> {
    const fallback = this.#rule;
    let invocation: string | undefined;
    return new Promise((resolve) => {
      this.#rule = (request) => {
        const id = request.headers['amz-sdk-invocation-id'];
        if (invocation !== undefined) return id === invocation ? retries : fallback(request);
        if (!matches(request)) return fallback(request);
        if (id === undefined) throw new Error('the request carries no amz-sdk-invocation-id: not sent by the AWS SDK');
        invocation = id;
        this.#onApplied.set(request, resolve);
        return { action: 'dropReply' };
      };
    });
  }

  /**
   * The SDK's attempt number of a request (`amz-sdk-request: attempt=2; max=3`), 1 without the header;
   * also of a request still in the SDK, whose header names are in lower case too.
   */
  static attemptOf(request: Pick<ProxiedRequest, 'headers'>): number {
    const match = /attempt=(\d+)/.exec(request.headers['amz-sdk-request'] ?? '');
    return match === null ? 1 : Number(match[1]);
  }

  /** Destroys every connection and stops listening. Safe to call more than once. */
  close(): Promise<void> {
    this.#closing ??= new Promise<void>((resolve) => {
      this.#lifetime.abort();
      for (const socket of this.#sockets) socket.destroy();
      this.#server.close(() => resolve());
    });
    return this.#closing;
  }

  #track(socket: Socket): Socket {
    if (this.#lifetime.signal.aborted) {
      socket.destroy();
      return socket;
    }
    this.#sockets.add(socket);
    socket.once('close', () => this.#sockets.delete(socket));
    // Errors end the connection through 'close'; an unhandled 'error' would crash the test process.
    socket.on('error', () => socket.destroy());
    return socket;
  }

  #accept(client: Socket): void {
    this.#track(client);
    if (client.destroyed) return; // the proxy is closing
    if (this.#refusing) {
      client.resetAndDestroy();
      return;
    }
    const connection = ++this.#connections;
    let upstream: Socket | undefined;
    /** Set once the connection can no longer carry replies in order (blackholed or dropped). */
    let dead = false;
    let queue: Promise<void> = Promise.resolve();
    /** The request passed on whose reply has not started yet: the SDK sends the next one only after the whole reply. */
    let awaiting: { readonly request: ProxiedRequest; readonly sentAt: number } | undefined;

    const mainUpstream = (): Socket => {
      if (upstream !== undefined) return upstream;
      upstream = this.#track(connect(this.#upstream));
      upstream.on('data', () => {
        if (awaiting === undefined) return;
        this.onServerReply?.(awaiting.request, performance.now() - awaiting.sentAt, true);
        awaiting = undefined;
      });
      upstream.pipe(client);
      upstream.once('close', () => client.destroy());
      return upstream;
    };
    client.once('close', () => {
      if (awaiting !== undefined) this.onServerReply?.(awaiting.request, performance.now() - awaiting.sentAt, false);
      awaiting = undefined;
      upstream?.destroy();
    });

    const handle = async (request: ProxiedRequest, raw: Buffer): Promise<void> => {
      if (dead || client.destroyed || this.#lifetime.signal.aborted) return;
      const fault = this.#rule(request);
      const exchange: ProxiedExchange = { request, fault };
      this.exchanges.push(exchange);
      switch (fault.action) {
        case 'forward':
          if (fault.delayMs !== undefined && fault.delayMs > 0) await this.#sleep(fault.delayMs);
          if (!dead && !client.destroyed && !this.#lifetime.signal.aborted) {
            awaiting = { request, sentAt: performance.now() };
            mainUpstream().write(raw);
          }
          break;
        case 'blackhole':
          dead = true;
          break;
        case 'dropReply':
          dead = true;
          await this.#applyWithoutReply(exchange, raw, client);
          break;
        case 'dropRequest':
          dead = true;
          client.destroy();
          break;
        case 'respond':
          if (fault.delayMs !== undefined && fault.delayMs > 0) await this.#sleep(fault.delayMs);
          if (!client.destroyed) client.write(replyBytes(fault.reply));
          break;
      }
      this.#onApplied.get(request)?.(exchange);
      this.#onApplied.delete(request);
    };

    const parser = new RequestParser((head, body) => {
      const request = toRequest(head, body, ++this.#requests, connection);
      const raw = Buffer.concat([head, body]);
      // One at a time, in order: a delayed request must not be overtaken by the next one.
      queue = queue
        .then(() => handle(request, raw))
        .catch(() => {
          client.destroy();
        });
    });
    client.on('data', (chunk: Buffer) => {
      if (!parser.push(chunk)) client.destroy();
    });
  }

  /**
   * Sends the request over a connection of its own, so that the first bytes
   * coming back are certainly its reply; once they come, the server has
   * applied it: both connections are destroyed and the reply is lost.
   */
  #applyWithoutReply(exchange: ProxiedExchange, raw: Buffer, client: Socket): Promise<void> {
    return new Promise<void>((resolve) => {
      const server = this.#track(connect(this.#upstream));
      server.once('data', (chunk: Buffer) => {
        const lineEnd = chunk.indexOf('\r\n');
        exchange.swallowedStatusLine = chunk.subarray(0, lineEnd < 0 ? chunk.length : lineEnd).toString('latin1');
        server.destroy();
        client.destroy();
      });
      server.once('close', () => {
        client.destroy();
        resolve();
      });
      server.write(raw);
    });
  }

  #sleep(ms: number): Promise<void> {
    return new Promise((resolve) => {
      const signal = this.#lifetime.signal;
      const timer = setTimeout(done, ms);
      function done(): void {
        clearTimeout(timer);
        signal.removeEventListener('abort', done);
        resolve();
      }
      signal.addEventListener('abort', done, { once: true });
    });
  }
}

const STATUS_TEXT: Readonly<Record<number, string>> = {
  200: 'OK',
  400: 'Bad Request',
  500: 'Internal Server Error',
  503: 'Service Unavailable',
};

function replyBytes(reply: CannedReply): Buffer {
  const body = Buffer.from(reply.body, 'utf8');
  const head =
    `HTTP/1.1 ${reply.status} ${STATUS_TEXT[reply.status] ?? 'Error'}\r\n` +
    'Content-Type: application/x-amz-json-1.0\r\n' +
    `Content-Length: ${body.length}\r\n` +
    // The SDK reads the request id into error metadata; a fixed one says "from the proxy".
    'x-amzn-RequestId: FAULTPROXY\r\n' +
    'Connection: keep-alive\r\n\r\n';
  return Buffer.concat([Buffer.from(head, 'latin1'), body]);
}

function toRequest(head: Buffer, body: Buffer, seq: number, connection: number): ProxiedRequest {
  const lines = head.toString('latin1').split('\r\n');
  const [method = '', path = ''] = (lines[0] ?? '').split(' ');
  const headers: Record<string, string> = {};
  for (const line of lines.slice(1)) {
    const colon = line.indexOf(':');
    if (colon > 0) headers[line.slice(0, colon).trim().toLowerCase()] = line.slice(colon + 1).trim();
  }
  return { seq, connection, method, path, headers, target: headers['x-amz-target'], body };
}

/**
 * Cuts a byte stream into HTTP/1.1 requests. Bodies are delimited by
 * `Content-Length` only: the AWS SDK always sends one, and chunked bodies
 * are refused rather than misread.
 */
class RequestParser {
  #buffer: Buffer = Buffer.alloc(0);
  readonly #onRequest: (head: Buffer, body: Buffer) => void;

  constructor(onRequest: (head: Buffer, body: Buffer) => void) {
    this.#onRequest = onRequest;
  }

  /** Feeds bytes; false when they are not HTTP this parser understands. */
  push(chunk: Buffer): boolean {
    this.#buffer = this.#buffer.length === 0 ? chunk : Buffer.concat([this.#buffer, chunk]);
    for (;;) {
      const headEnd = this.#buffer.indexOf(HEAD_END);
      if (headEnd < 0) return this.#buffer.length <= MAX_HEAD_BYTES;
      const head = this.#buffer.subarray(0, headEnd + HEAD_END.length);
      const length = bodyLength(head.toString('latin1'));
      if (length === undefined) return false;
      const end = head.length + length;
      if (this.#buffer.length < end) return true;
      const body = this.#buffer.subarray(head.length, end);
      this.#buffer = this.#buffer.subarray(end);
      this.#onRequest(Buffer.from(head), Buffer.from(body));
    }
  }
}

/** The body length a request head announces; undefined for what this parser does not handle. */
function bodyLength(head: string): number | undefined {
  if (/\r\ntransfer-encoding:/i.test(head)) return undefined;
  const match = /\r\ncontent-length:\s*(\d+)\s*\r\n/i.exec(head);
  return match === null ? 0 : Number(match[1]);
}
