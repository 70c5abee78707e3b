/**
 * The package as npm would publish it: built, packed into a tarball, and
 * unpacked beside it, for the package checks (integration/package.test.ts).
 */
import { execFile } from 'node:child_process';
import { mkdir, mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { REPO_ROOT } from './processes.js';

const run = promisify(execFile);

/** Runs a command, failing with its output when it exits non-zero. */
export async function sh(command: string, args: readonly string[], options: { cwd: string; env?: NodeJS.ProcessEnv }): Promise<string> {
  try {
    const { stdout } = await run(command, args, { ...options, encoding: 'utf8', maxBuffer: 64 * 1024 * 1024 });
    return stdout;
  } catch (error) {
    const { stdout, stderr } = error as { stdout?: string; stderr?: string };
    throw new Error(`${command} ${args.join(' ')} failed in ${options.cwd}:\n${stdout ?? ''}\n${stderr ?? ''}`, { cause: error });
  }
}

export interface PackedPackage {
  /** A scratch directory holding everything below; `dispose()` removes it. */
  readonly directory: string;
  readonly tarball: string;
  /** The tarball unpacked: what lands in `node_modules/dynamodb-lock`. */
  readonly unpacked: string;
  /** Paths inside the package, as npm listed them. */
  readonly files: readonly string[];
  dispose(): Promise<void>;
}

export async function packPackage(): Promise<PackedPackage> {
  const directory = await mkdtemp(join(tmpdir(), 'dynamodb-lock-pack-'));
  try {
    await sh('npm', ['run', 'build'], { cwd: REPO_ROOT });
    const [packed] = JSON.parse(await sh('npm', ['pack', '--json', '--pack-destination', directory], { cwd: REPO_ROOT })) as [
      { filename: string; files: { path: string }[] },
    ];
    const tarball = join(directory, packed.filename);
    const unpacked = join(directory, 'unpacked');
    await mkdir(unpacked);
    await sh('tar', ['-xzf', tarball, '-C', unpacked, '--strip-components=1'], { cwd: directory });
    return {
      directory,
      tarball,
      unpacked,
      files: packed.files.map((file) => file.path),
      dispose: () => rm(directory, { recursive: true, force: true }),
    };
  } catch (error) {
    await rm(directory, { recursive: true, force: true });
    throw error;
  }
}

/**
 * The lowest versions the peer ranges allow, optional peers included, e.g.
 * `@aws-sdk/client-dynamodb@3.687.0`: each range's first caret (`^10.3.0 || ^11.1.0`: 10.3.0).
 */
export async function lowestPeerVersions(): Promise<string[]> {
  const manifest = JSON.parse(await readFile(join(REPO_ROOT, 'package.json'), 'utf8')) as { peerDependencies: Record<string, string> };
  return Object.entries(manifest.peerDependencies).map(([name, range]) => `${name}@${/^\^(\S+)/.exec(range)![1]}`);
}

/** The version of one of the repository's own dependencies, as installed. */
export async function installedVersion(name: string): Promise<string> {
  const manifest = JSON.parse(await readFile(join(REPO_ROOT, 'node_modules', name, 'package.json'), 'utf8')) as { version: string };
  return manifest.version;
}

/**
 * `npm install` in an application, from the local npm cache where it can
 * (CI keeps one across runs). A package's cached metadata may predate a
 * release that another package now needs (`ETARGET` right after an AWS SDK
 * release): the registry is then asked afresh.
 */
export async function npmInstall(app: string, args: readonly string[]): Promise<string> {
  try {
    return await sh('npm', ['install', '--no-audit', '--no-fund', '--prefer-offline', ...args], { cwd: app });
  } catch (error) {
    if (!(error instanceof Error) || !error.message.includes('ETARGET')) throw error;
    return sh('npm', ['install', '--no-audit', '--no-fund', '--prefer-online', ...args], { cwd: app });
  }
}

/** The application's `@aws-sdk/*` and `@smithy/*` packages, path → version, as its package-lock records them. */
export async function lockedSdkPackages(app: string): Promise<Record<string, string>> {
  const lock = JSON.parse(await readFile(join(app, 'package-lock.json'), 'utf8')) as { packages: Record<string, { version?: string }> };
  return Object.fromEntries(
    Object.entries(lock.packages)
      .filter(([path]) => /node_modules\/@(aws-sdk|smithy)\//.test(path))
      .map(([path, entry]) => [path, entry.version ?? '']),
  );
}
