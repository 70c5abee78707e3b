/**
 * jest globalTeardown of the projects against DynamoDB Local: stops the
 * DynamoDB Local started by global-setup.ts and removes the compiled CLI.
 * jest runs it after failing runs too.
 */
export default async function globalTeardown(): Promise<void> {
  const cli = globalThis.__BUILT_CLI__;
  globalThis.__BUILT_CLI__ = undefined;
  await cli?.dispose();
  const server = globalThis.__DYNAMODB_LOCAL__;
  if (!server) return;
  globalThis.__DYNAMODB_LOCAL__ = undefined;
  delete process.env.DYNAMODB_LOCAL_ENDPOINT;
  await server.stop();
}
