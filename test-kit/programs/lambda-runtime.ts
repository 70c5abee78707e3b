/**
 * A stand-in for the AWS Lambda runtime: it loads a handler module once (its
 * module scope lives as long as this process, as in an execution
 * environment) and runs one invocation at a time, each read from stdin as a
 * JSON line `{ "id", "remainingMs", "event" }`, with a context whose
 * `getRemainingTimeInMillis()` counts down from `remainingMs`. It reports
 * on stdout as JSON lines: `ready` once the handler module is loaded, `returned` (with the handler's result) or
 * `failed` (the error's name, kind and message), beside whatever the
 * handler logs. When stdin ends, its main module returns: the process then
 * exits only if nothing else keeps it alive. Freezing and killing it at the
 * deadline is the runner's part (test-kit/lambda-runner.ts).
 *
 * Usage: tsx test-kit/programs/lambda-runtime.ts <handler module> (the AWS environment configures the handler)
 */
import { createInterface } from 'node:readline';
import { pathToFileURL } from 'node:url';

interface Invocation {
  readonly id: number;
  readonly remainingMs: number;
  readonly event: unknown;
}

type Handler = (event: unknown, context: { getRemainingTimeInMillis(): number }) => Promise<unknown>;

const [modulePath] = process.argv.slice(2);
if (modulePath === undefined) throw new Error('usage: lambda-runtime <handler module>');
const { handler } = (await import(pathToFileURL(modulePath).href)) as { handler: Handler };

const report = (event: string, fields: object): void => {
  process.stdout.write(`${JSON.stringify({ event, pid: process.pid, ...fields })}\n`);
};

report('ready', {});

for await (const line of createInterface({ input: process.stdin })) {
  if (line.trim() === '') continue;
  const { id, remainingMs, event } = JSON.parse(line) as Invocation;
  const deadline = Date.now() + remainingMs;
  try {
    const result = await handler(event, { getRemainingTimeInMillis: () => deadline - Date.now() });
    report('returned', { id, result });
  } catch (error) {
    const { name, message, kind } = error as { name?: string; message?: string; kind?: string };
    report('failed', { id, error: { name, kind, message } });
  }
}
