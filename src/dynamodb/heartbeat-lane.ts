/**
 * The heartbeats' own lane to DynamoDB: a second `DynamoDBClient` derived
 * from the user's, so that nothing else the lock client sends can hold a
 * heartbeat back in the SDK. One client shares two things among all its
 * requests: the socket pool (a heartbeat waits for a socket behind queued
 * acquisitions) and the retry strategy (in `retryMode: 'adaptive'`, a few
 * throttled reads of one hot key make its client-side rate limiter delay
 * every request, heartbeats included). The lane has its own of both.
 *
 * Derived, not built from ambient defaults: it takes the user's client's
 * region, credentials (the same provider, so the same cache), custom
 * endpoint, FIPS/dual-stack settings, `maxAttempts`, logger and user agent;
 * its HTTP handler has the user's timeouts and an agent of the user's agent
 * options (maxSockets included). What differs: the SDK's standard retry
 * mode (no client-side rate limiter; the heartbeat scheduler paces itself),
 * and a custom agent class (a proxy agent, say), which cannot be copied, is
 * shared. Middleware the user added to their client's stack, also after the
 * lock client was built, runs on each heartbeat too.
 *
 * A sender that is not an SDK client (anything with `send` alone) gets no
 * lane: heartbeats go through it, and only the acquisition gate keeps them
 * first.
 */
import { Agent as HttpAgent } from 'node:http';
import { Agent as HttpsAgent } from 'node:https';
import { DynamoDBClient, type DynamoDBClientConfig } from '@aws-sdk/client-dynamodb';
import { DEPARTURE_MIDDLEWARE } from './departure.js';

type Sender = Pick<DynamoDBClient, 'send'>;

/** What the lane reads of an SDK v3 client, by shape: it may come from another copy of the SDK. */
interface SdkClientShape {
  readonly config: Record<string, unknown> & { readonly requestHandler?: unknown };
  readonly middlewareStack: MiddlewareStackShape;
}

interface MiddlewareStackShape {
  clone(): MiddlewareStackShape;
  identify(): string[];
  remove(name: string): boolean;
}

/** Node's agents keep their constructor options on `options`. */
interface AgentShape {
  readonly options?: Record<string, unknown>;
}

function isSdkClient(sender: object): sender is SdkClientShape {
  const { config, middlewareStack } = sender as Partial<SdkClientShape>;
  return (
    typeof config === 'object' &&
    config !== null &&
    'requestHandler' in config &&
    typeof middlewareStack?.clone === 'function' &&
    typeof middlewareStack.identify === 'function'
  );
}

/** The config entries carried over as they are (values or the SDK's providers of them). */
const CARRIED = [
  'region',
  'credentials',
  'maxAttempts',
  'useFipsEndpoint',
  'useDualstackEndpoint',
  'logger',
  'customUserAgent',
  'userAgentAppId',
];

export class HeartbeatLane {
  readonly #user: Sender;
  readonly #sdk: SdkClientShape | undefined;
  #client: DynamoDBClient | undefined;
  /** The names of the middleware every client has (the lane's own), not carried from the user's stack. */
  #builtIn: readonly string[] = [];

  constructor(user: Sender) {
    this.#user = user;
    this.#sdk = isSdkClient(user) ? user : undefined;
  }

  /** What heartbeats are sent through: the lane, or the user's sender when it is not an SDK client. */
  get dynamoDB(): Sender {
    if (this.#sdk === undefined) return this.#user;
    return {
      send: ((command: { middlewareStack?: { use(stack: unknown): void } }, options?: unknown) =>
        this.#send(command, options)) as Sender['send'],
    };
  }

  /** Frees the lane's sockets. The lane is built again if a heartbeat is sent after. */
  destroy(): void {
    this.#client?.destroy();
    this.#client = undefined;
  }

  #send(command: { middlewareStack?: { use(stack: unknown): void } }, options: unknown): Promise<unknown> {
    const sdk = this.#sdk as SdkClientShape;
    // Built at the first heartbeat, after an acquisition: the user's handler has resolved its configuration by then.
    this.#client ??= this.#build(sdk);
    const added = sdk.middlewareStack.clone();
    for (const name of this.#builtIn) added.remove(name);
    added.remove(DEPARTURE_MIDDLEWARE); // heartbeats are not watched
    // Applied whole, whatever `identify()` lists: it leaves out an entry
    // placed beside one of the SDK's middleware removed above, and the
    // lane's stack has that middleware to place the entry beside.
    command.middlewareStack?.use(added);
    return (this.#client.send as (command: unknown, options: unknown) => Promise<unknown>)(command, options);
  }

  #build(sdk: SdkClientShape): DynamoDBClient {
    const { config } = sdk;
    const carried: Record<string, unknown> = {};
    for (const name of CARRIED) if (config[name] !== undefined) carried[name] = config[name];
    const client = new DynamoDBClient({
      ...(carried as DynamoDBClientConfig),
      ...(config['isCustomEndpoint'] === true ? { endpoint: config['endpoint'] as DynamoDBClientConfig['endpoint'] } : {}),
      retryMode: 'standard',
      requestHandler: laneHandler(config.requestHandler),
    });
    this.#builtIn = client.middlewareStack.identify().map((entry) => entry.split(/ - | \(/)[0] as string);
    return client;
  }
}

/**
 * The user's handler's settings with sockets of the lane's own: the SDK's
 * Node handler tells its resolved settings; another handler is shared.
 */
function laneHandler(handler: unknown): DynamoDBClientConfig['requestHandler'] {
  const configs = (handler as { httpHandlerConfigs?: () => Record<string, unknown> } | undefined)?.httpHandlerConfigs?.();
  if (configs === undefined) return handler as DynamoDBClientConfig['requestHandler'];
  const { requestTimeout, connectionTimeout, throwOnRequestTimeout, httpAgent, httpsAgent } = configs;
  return {
    requestTimeout,
    connectionTimeout,
    throwOnRequestTimeout,
    httpAgent: agentLike(httpAgent, HttpAgent),
    httpsAgent: agentLike(httpsAgent, HttpsAgent),
  } as DynamoDBClientConfig['requestHandler'];
}

/** A new agent with the options of `agent`, when it is Node's own; a custom agent class is shared. */
function agentLike(agent: unknown, Agent: new (options?: Record<string, unknown>) => HttpAgent): unknown {
  if (agent === undefined) return undefined;
  if ((agent as object).constructor !== Agent) return agent;
  return new Agent({ ...(agent as AgentShape).options });
}
