/**
 * The `dynamodb-lock` CLI compiled once per test run, so that each of the
 * many CLI processes the tests start loads plain JavaScript instead of
 * compiling its TypeScript through tsx again (about a fifth of the CPU per
 * start). Every file of src/ is transpiled on its own, as `tsc` would emit
 * it: no bundle, so the package's dependencies load from node_modules and
 * the watchdog stays a file beside the CLI, as in the published package.
 *
 * The copy lives under node_modules/.cache/ of the work tree, with a copy of
 * package.json beside its src/: imports of dependencies resolve as they do
 * from src/, and the CLI reads its version from `../../package.json`.
 */
import { cp, mkdir, mkdtemp, readdir, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { build } from 'esbuild';

/** The environment variable that names the compiled CLI's main.js to test-kit/cli-process.ts. */
export const BUILT_CLI_ENV = 'TEST_KIT_BUILT_CLI';

export interface BuiltCli {
  /** The compiled src/cli/main.ts. */
  readonly main: string;
  dispose(): Promise<void>;
}

export async function buildCli(repoRoot: string): Promise<BuiltCli> {
  const cache = join(repoRoot, 'node_modules', '.cache');
  await mkdir(cache, { recursive: true });
  const directory = await mkdtemp(join(cache, 'dynamodb-lock-cli-'));
  try {
    const sources = (await readdir(join(repoRoot, 'src'), { recursive: true }))
      .filter((file) => file.endsWith('.ts'))
      .map((file) => join(repoRoot, 'src', file));
    await build({
      entryPoints: sources,
      outbase: join(repoRoot, 'src'),
      outdir: join(directory, 'src'),
      format: 'esm',
      platform: 'node',
      target: 'node20',
      logLevel: 'warning',
    });
    await cp(join(repoRoot, 'package.json'), join(directory, 'package.json'));
  } catch (error) {
    await rm(directory, { recursive: true, force: true });
    throw error;
  }
  return {
    main: join(directory, 'src', 'cli', 'main.js'),
    dispose: () => rm(directory, { recursive: true, force: true }),
  };
}
