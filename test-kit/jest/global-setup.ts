/**
 * jest globalSetup of the "integration" project (jest.config.js): starts one
 * DynamoDB Local for the whole run. jest only calls it when at least one test
 * of that project was selected, so unit-only runs don't start java.
 *
 * Runs in jest's main process before the workers are spawned: workers inherit
 * process.env, and globalTeardown (same process) finds the handle on globalThis.
 */
import { tsImport } from 'tsx/esm/api';
import type { DynamoDBLocal } from '../../src/testing/index.js';

declare global {
  var __DYNAMODB_LOCAL__: DynamoDBLocal | undefined;
}

export default async function globalSetup(): Promise<void> {
  // The DynamoDB Local users get from `dynamodb-lock/testing`. jest transforms
  // this file, but not what it imports (natively, as ESM, in this "type":
  // "module" package): a plain import of src/testing fails with
  // ERR_MODULE_NOT_FOUND (known jest/ts-jest limitation). tsx, which the demo
  // and benches use anyway, loads the TypeScript module instead.
  const { startDynamoDBLocal } = (await tsImport('../../src/testing/index.ts', import.meta.url)) as typeof import('../../src/testing/index.js');

  const startedAt = Date.now();
  // One server for the whole run, which sends it far more requests than its start costs.
  const server = await startDynamoDBLocal({ optimizeFor: 'throughput' });
  globalThis.__DYNAMODB_LOCAL__ = server;
  // Keep in sync with ENDPOINT_ENV in ../aws.ts (read by the tests).
  process.env.DYNAMODB_LOCAL_ENDPOINT = server.endpoint;
  if (process.env.DYNAMODB_LOCAL_DEBUG) {
    console.log(`\nDynamoDB Local up at ${server.endpoint} in ${Date.now() - startedAt} ms`);
  }
}
