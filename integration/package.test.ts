/**
 * The published package, checked the way users meet it: the packed tarball
 * passes publint and "are the types wrong", ships every file it points at,
 * and an application on the lowest versions of its peers type-checks against it
 * and runs it from ESM and from CommonJS, on this Node and on the Node
 * binaries listed in PACKAGE_TEST_NODES (colon-separated; .ci/run
 * passes the lower bounds of `engines`).
 */
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { cp, readFile, writeFile } from 'node:fs/promises';
import { join, posix } from 'node:path';
import { localEndpoint, uniqueTableName } from '../test-kit/aws.js';
import { installedVersion, lowestPeerVersions, packPackage, sh, type PackedPackage } from '../test-kit/packed-package.js';
import { REPO_ROOT } from '../test-kit/processes.js';

let packed: PackedPackage;

beforeAll(async () => {
  packed = await packPackage();
}, 120_000);

afterAll(async () => {
  await packed?.dispose();
});

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
    // The benchmarks' history is for maintainers; BENCHMARKS.md links to it in the repository.
    expect(packed.files.filter((file) => file.startsWith('docs/benchmark-history'))).toEqual([]);
  });
});

describe('an application on the lowest supported AWS SDK', () => {
  let app: string;

  beforeAll(async () => {
    app = join(packed.directory, 'app');
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
