/**
 * jest globalTeardown of the "integration" project: stops the DynamoDB Local
 * started by global-setup.ts. jest runs it after failing runs too.
 */
export default async function globalTeardown(): Promise<void> {
  const server = globalThis.__DYNAMODB_LOCAL__;
  if (!server) return;
  globalThis.__DYNAMODB_LOCAL__ = undefined;
  delete process.env.DYNAMODB_LOCAL_ENDPOINT;
  await server.stop();
}
