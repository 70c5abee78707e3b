#!/usr/bin/env node
/** The `dynamodb-lock` executable (the package's `bin`). */
import { runCli } from './cli.js';
import { processIO } from './io.js';

// `dynamodb-lock list | head` closes the pipe early; that is not an error worth a stack trace.
process.stdout.on('error', (error: NodeJS.ErrnoException) => {
  if (error.code === 'EPIPE') process.exit(process.exitCode ?? 0);
  throw error;
});

// The AWS SDK warns at every start under Node 20 about its plans for 2027: in the mail of a nightly
// cron job that is noise. The command that `run` starts still gets the environment as it was.
const environment = { ...process.env };
process.env['AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED'] ??= 'true';

const code = await runCli(process.argv.slice(2), processIO(environment));
process.exitCode = code;
// Everything was closed; should anything still hold the event loop (a keep-alive socket), a finished command must not hang.
setTimeout(() => process.exit(code), 1_000).unref();
