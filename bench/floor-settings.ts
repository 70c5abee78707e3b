/**
 * The `DynamoDBClient` settings the floor benchmark compares (bench/floor.ts).
 *
 * Every client talks to DynamoDB Local the way a production client talks to
 * DynamoDB: no `endpoint` option, so the SDK resolves the regional endpoint
 * `https://dynamodb.us-east-1.amazonaws.com` through its endpoint rules and
 * runs its endpoint-discovery middleware, as it does for users. An HTTPS
 * agent whose `createConnection` opens a plain TCP connection to DynamoDB
 * Local carries the requests there. It keeps the SDK's default agent
 * settings (keep-alive, 50 sockets); what it leaves out is TLS, which no
 * client setting changes. Region and credentials come from the
 * environment, as for `new DynamoDBClient({})`; the benchmark sets them.
 *
 * A setting counts only if it changes neither what is sent nor how errors
 * are retried; `adaptive-retries` changes retries and is measured only for
 * the record.
 */
import { Agent, type AgentOptions } from 'node:https';
import { connect, type Socket } from 'node:net';
import type { DynamoDBClientConfig } from '@aws-sdk/client-dynamodb';

export const BENCH_REGION = 'us-east-1';
const BENCH_CREDENTIALS = { accessKeyId: 'bench', secretAccessKey: 'bench' };

/** What `new DynamoDBClient({})` reads from the environment: region and credentials, and nothing that would change the endpoint. */
export function setBenchEnvironment(): void {
  process.env.AWS_REGION = BENCH_REGION;
  process.env.AWS_ACCESS_KEY_ID = BENCH_CREDENTIALS.accessKeyId;
  process.env.AWS_SECRET_ACCESS_KEY = BENCH_CREDENTIALS.secretAccessKey;
  for (const name of [
    'AWS_SESSION_TOKEN',
    'AWS_PROFILE',
    'AWS_ENDPOINT_URL',
    'AWS_ENDPOINT_URL_DYNAMODB',
    'AWS_ENABLE_ENDPOINT_DISCOVERY',
    'AWS_ENDPOINT_DISCOVERY_ENABLED',
  ]) {
    delete process.env[name];
  }
}

/** An HTTPS agent that connects every request to DynamoDB Local, without TLS. */
class ToDynamoDBLocal extends Agent {
  readonly #port: number;

  constructor(port: number, options: AgentOptions) {
    super(options);
    this.#port = port;
  }

  override createConnection(): Socket {
    return connect(this.#port, '127.0.0.1');
  }
}

const REGIONAL_ENDPOINT = `https://dynamodb.${BENCH_REGION}.amazonaws.com`;

/** Warnings and errors as the SDK's default logger gives them (nowhere), but no `info`: the SDK then skips building its per-call log entry. */
const LOGGER_WITHOUT_INFO = { debug: () => {}, warn: () => {}, error: () => {} } as unknown as DynamoDBClientConfig['logger'];

/** The SDK's own default agent settings (@smithy/node-http-handler). */
const SDK_DEFAULT_AGENT: AgentOptions = { keepAlive: true, maxSockets: 50 };

export interface ClientSettings {
  readonly name: string;
  /** Whether it changes how errors are retried: then it is measured but never recommended. */
  readonly changesRetries?: boolean;
  config(localPort: number): DynamoDBClientConfig;
}

const routed = (localPort: number, agent: AgentOptions = SDK_DEFAULT_AGENT): DynamoDBClientConfig['requestHandler'] => ({
  httpsAgent: new ToDynamoDBLocal(localPort, agent),
});

export const CLIENT_SETTINGS: readonly ClientSettings[] = [
  { name: 'default', config: (port) => ({ requestHandler: routed(port) }) },
  // What the other benchmarks do: an explicit endpoint, which skips endpoint rules and endpoint discovery.
  { name: 'custom-endpoint', config: (port) => ({ endpoint: `http://127.0.0.1:${port}` }) },
  { name: 'static-credentials', config: (port) => ({ requestHandler: routed(port), credentials: BENCH_CREDENTIALS }) },
  { name: 'max-sockets-256', config: (port) => ({ requestHandler: routed(port, { keepAlive: true, maxSockets: 256 }) }) },
  {
    name: 'request-timeouts',
    config: (port) => ({
      requestHandler: { httpsAgent: new ToDynamoDBLocal(port, SDK_DEFAULT_AGENT), connectionTimeout: 5_000, requestTimeout: 30_000 },
    }),
  },
  { name: 'no-endpoint-discovery', config: (port) => ({ requestHandler: routed(port), endpointDiscoveryEnabled: false }) },
  { name: 'account-id-endpoint-disabled', config: (port) => ({ requestHandler: routed(port), accountIdEndpointMode: 'disabled' }) },
  { name: 'cache-middleware', config: (port) => ({ requestHandler: routed(port), cacheMiddleware: true }) },
  // The regional endpoint the rules resolve to, given outright: the same host, so the same bytes.
  { name: 'regional-endpoint', config: (port) => ({ requestHandler: routed(port), endpoint: REGIONAL_ENDPOINT }) },
  { name: 'disable-host-prefix', config: (port) => ({ requestHandler: routed(port), disableHostPrefix: true }) },
  // The SDK's logger middleware filters every input and output for its log unless the logger has no `info`.
  { name: 'logger-without-info', config: (port) => ({ requestHandler: routed(port), logger: LOGGER_WITHOUT_INFO }) },
  {
    name: 'cache-middleware+logger-without-info',
    config: (port) => ({ requestHandler: routed(port), cacheMiddleware: true, logger: LOGGER_WITHOUT_INFO }),
  },
  { name: 'adaptive-retries', changesRetries: true, config: (port) => ({ requestHandler: routed(port), retryMode: 'adaptive' }) },
];

export function settingsNamed(names: readonly string[]): ClientSettings[] {
  return names.map((name) => {
    const settings = CLIENT_SETTINGS.find((s) => s.name === name);
    if (settings === undefined) {
      throw new Error(`unknown client settings ${name}; known: ${CLIENT_SETTINGS.map((s) => s.name).join(', ')}`);
    }
    return settings;
  });
}
