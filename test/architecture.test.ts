/**
 * The dependency direction of src/: the lock's life reads top-down, from the
 * client through acquire/, hold/ and heartbeat/ to dynamodb/ and protocol/,
 * and no module reaches back up. Subfolders take from the top of src/ only
 * its leaf modules (errors, clock, logger, options...), which themselves
 * take nothing from a folder above protocol/ and dynamodb/.
 */
import { describe, expect, it } from '@jest/globals';
import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const SRC = resolve(dirname(fileURLToPath(import.meta.url)), '../src');

/** Lower ranks may not import higher ones; equal ranks are one folder (or primitives beside protocol). */
const RANK: Record<string, number> = { primitives: 0, protocol: 0, dynamodb: 1, heartbeat: 2, hold: 3, acquire: 4 };
/** Top-level modules any folder may use: they import nothing above dynamodb/. */
const LEAVES = new Set([
  'errors',
  'guarded-write-errors',
  'lock-table-replication-error',
  'clock',
  'logger',
  'events',
  'options',
  'defaults',
  'lock-key',
  'lock-holder',
]);

function sourceFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) =>
    entry.isDirectory() ? sourceFiles(join(dir, entry.name)) : entry.name.endsWith('.ts') ? [join(dir, entry.name)] : [],
  );
}

/** Where a module lives: its folder under src/, or '' and its name for the top. */
function placeOf(file: string): { folder: string; name: string } {
  const [first, ...rest] = relative(SRC, file).replace(/\.ts$/, '').split('/');
  return rest.length === 0 ? { folder: '', name: first as string } : { folder: first as string, name: rest.join('/') };
}

/** Every relative import of a file, as the file it names. */
function importsOf(file: string): string[] {
  const text = readFileSync(file, 'utf8');
  return [...text.matchAll(/from '(\.{1,2}\/[^']+)\.js'/g)].map((match) => resolve(dirname(file), `${match[1] as string}.ts`));
}

/** Why an import breaks the direction, or undefined when it does not. */
function violation(from: string, to: string): string | undefined {
  const source = placeOf(from);
  const target = placeOf(to);
  const sourceRank = RANK[source.folder];
  if (source.folder === '') {
    if (!LEAVES.has(source.name)) return undefined; // the client and its public types may use anything below them
    const targetRank = target.folder === '' ? undefined : RANK[target.folder];
    if (target.folder === '' ? LEAVES.has(target.name) : targetRank !== undefined && targetRank <= RANK.dynamodb!) return undefined;
    return 'a leaf module takes only from leaves, protocol/, primitives/ and dynamodb/';
  }
  if (sourceRank === undefined) return undefined; // cli/, election/, testing/, opentelemetry/ stand beside the client
  if (target.folder === source.folder) return undefined;
  if (target.folder === '') return LEAVES.has(target.name) ? undefined : `a folder takes from the top only leaf modules, not ${target.name}`;
  const targetRank = RANK[target.folder];
  if (targetRank === undefined) return `${target.folder}/ is not below ${source.folder}/`;
  if (source.folder === 'protocol' && target.folder !== 'protocol') return 'protocol/ is pure and takes nothing but errors';
  if (target.folder === 'primitives') return source.folder === 'protocol' ? 'protocol/ is pure' : undefined;
  return targetRank < sourceRank ? undefined : `${source.folder}/ may not take from ${target.folder}/`;
}

describe('the dependency direction of src/', () => {
  const files = sourceFiles(SRC);

  it('finds the folders it checks', () => {
    const folders = new Set(files.map((file) => placeOf(file).folder));
    for (const folder of Object.keys(RANK)) expect(folders).toContain(folder);
  });

  it('has no import that points up, or into the top past its leaf modules', () => {
    const broken: string[] = [];
    for (const file of files) {
      for (const target of importsOf(file)) {
        const why = violation(file, target);
        if (why !== undefined) broken.push(`${relative(SRC, file)} -> ${relative(SRC, target)}: ${why}`);
      }
    }
    expect(broken).toEqual([]);
  });

  it('catches an import that points up', () => {
    expect(violation(join(SRC, 'dynamodb/send-write.ts'), join(SRC, 'hold/held-lock.ts'))).toMatch(/may not take from hold/);
    expect(violation(join(SRC, 'hold/lock-keeper.ts'), join(SRC, 'lock.ts'))).toMatch(/only leaf modules/);
    expect(violation(join(SRC, 'protocol/codec.ts'), join(SRC, 'primitives/bytes.ts'))).toMatch(/pure/);
    expect(violation(join(SRC, 'errors.ts'), join(SRC, 'hold/held-lock.ts'))).toMatch(/leaf module/);
  });
});
