/**
 * jest globalSetup of the projects against DynamoDB Local (jest.config.js):
 * starts one DynamoDB Local for the whole run, warms it (../warm-up.ts), and
 * compiles the CLI once for the tests that start it (../built-cli.ts). jest
 * only calls it when at least one test of those projects was selected, so
 * unit-only runs don't start java.
 *
 * Runs in jest's main process before the workers are spawned: workers inherit
 * process.env, and globalTeardown (same process) finds the handles on
 * globalThis.
 */
import { fileURLToPath } from 'node:url';
import { tsImport } from 'tsx/esm/api';
import type { DynamoDBLocal } from '../../src/testing/index.js';
import type { BuiltCli } from '../built-cli.js';

declare global {
  var __DYNAMODB_LOCAL__: DynamoDBLocal | undefined;
  var __BUILT_CLI__: BuiltCli | undefined;
}

export default async function globalSetup(): Promise<void> {
  // The DynamoDB Local users get from `dynamodb-lock/testing`. jest transforms
  // this file, but not what it imports (natively, as ESM, in this "type":
  // "module" package): a plain import of src/testing fails with
  // ERR_MODULE_NOT_FOUND (known jest/ts-jest limitation). tsx, which the demo
  // and benches use anyway, loads the TypeScript modules instead.
  const { startDynamoDBLocal } = (await tsImport('../../src/testing/index.ts', import.meta.url)) as typeof import('../../src/testing/index.js');
  const { buildCli, BUILT_CLI_ENV } = (await tsImport('../built-cli.ts', import.meta.url)) as typeof import('../built-cli.js');
  const { warmUp } = (await tsImport('../warm-up.ts', import.meta.url)) as typeof import('../warm-up.js');

  const startedAt = Date.now();
  // One server for the whole run, which sends it far more requests than its start costs.
  // Warmed while the CLI compiles: no test should meet the server's cold start.
  const [server, cli] = await Promise.allSettled([
    startDynamoDBLocal({ optimizeFor: 'throughput' }).then(async (started) => {
      await warmUp(started.clientConfig).catch(async (error: unknown) => {
        await started.stop();
        throw error;
      });
      return started;
    }),
    buildCli(fileURLToPath(new URL('../..', import.meta.url))),
  ]);
  if (server.status === 'rejected' || cli.status === 'rejected') {
    // No teardown follows a failed setup: undo the half that succeeded.
    if (server.status === 'fulfilled') await server.value.stop();
    if (cli.status === 'fulfilled') await cli.value.dispose();
    throw server.status === 'rejected' ? server.reason : (cli as PromiseRejectedResult).reason;
  }
  globalThis.__DYNAMODB_LOCAL__ = server.value;
  globalThis.__BUILT_CLI__ = cli.value;
  // Keep in sync with ENDPOINT_ENV in ../aws.ts (read by the tests).
  process.env.DYNAMODB_LOCAL_ENDPOINT = server.value.endpoint;
  process.env[BUILT_CLI_ENV] = cli.value.main;
  if (process.env.DYNAMODB_LOCAL_DEBUG) {
    console.log(`\nDynamoDB Local up at ${server.value.endpoint} in ${Date.now() - startedAt} ms`);
  }
}
