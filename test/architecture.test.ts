/**
 * The layout of src/ states its tiers. The top holds the package's public
 * API and the client. Below the client a lock's life reads top-down:
 * acquire/, which hands what it acquires to heartbeat/ (the held locks and
 * the one heartbeat loop that keeps them all), which keeps records of hold/
 * (one held lock: its state, its write queue, its release and guarded
 * writes), dynamodb/ (every call to DynamoDB), settings/, protocol/ (the
 * wire format, pure) beside primitives/, and base/, which every folder
 * speaks; gc/, which collects abandoned items, sits above them all, and
 * semaphore/, which takes permits as locks and recovers stopped ones as
 * gc/ collects, above gc/. A folder takes only from the folders ranked
 * below it. cli/, election/,
 * testing/ and opentelemetry/ stand beside the client, built on it. Only
 * dynamodb/ talks to DynamoDB.
 */
import { describe, expect, it } from '@jest/globals';
import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const SRC = resolve(dirname(fileURLToPath(import.meta.url)), '../src');

/** A folder takes only from folders of a lower rank: folders of one rank know nothing of each other. */
const RANK: Record<string, number> = {
  base: 0,
  primitives: 1,
  protocol: 1,
  settings: 2,
  dynamodb: 3,
  hold: 4,
  heartbeat: 5,
  acquire: 6,
  gc: 7,
  semaphore: 8,
};
/** Folders beside the client: they may use anything, and nothing ranked may use them. */
const BESIDE = new Set(['cli', 'election', 'testing', 'opentelemetry']);

function sourceFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) =>
    entry.isDirectory() ? sourceFiles(join(dir, entry.name)) : entry.name.endsWith('.ts') ? [join(dir, entry.name)] : [],
  );
}

/** Where a module lives: its folder under src/, or '' for the top, and its name there. */
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
  const source = placeOf(from).folder;
  const target = placeOf(to).folder;
  const sourceRank = RANK[source];
  if (sourceRank === undefined || target === source) return undefined; // the top and the folders beside it use anything below
  if (target === '') return `${source}/ may not take from the top of src/ (the public API and the client)`;
  const targetRank = RANK[target];
  if (targetRank === undefined) return `${source}/ may not take from ${target}/, which stands beside the client`;
  return targetRank < sourceRank ? undefined : `${source}/ may not take from ${target}/`;
}

/** The SDK commands a module makes (`new GetItemCommand(...)` of a class imported from `@aws-sdk/client-dynamodb`). */
function commandsMadeIn(file: string): string[] {
  const text = readFileSync(file, 'utf8');
  const imported = new Set(
    [...text.matchAll(/import \{([^}]*)\} from '@aws-sdk\/client-dynamodb'/g)].flatMap((match) =>
      (match[1] as string).split(',').map((name) => name.trim()),
    ),
  );
  return [...text.matchAll(/new (\w+)\(/g)].map((match) => match[1] as string).filter((name) => imported.has(name) && name.endsWith('Command'));
}

describe('the layout of src/', () => {
  const files = sourceFiles(SRC);

  it('gives every folder a place', () => {
    const folders = new Set(files.map((file) => placeOf(file).folder).filter((folder) => folder !== ''));
    for (const folder of folders) expect([folder, RANK[folder] !== undefined || BESIDE.has(folder)]).toEqual([folder, true]);
    for (const folder of [...Object.keys(RANK), ...BESIDE]) expect(folders).toContain(folder);
  });

  it('holds at the top only the public API and the client: every module there is exported by index.ts', () => {
    const index = readFileSync(join(SRC, 'index.ts'), 'utf8');
    const top = files.map(placeOf).filter((place) => place.folder === '' && place.name !== 'index');
    expect(top.length).toBeGreaterThan(0);
    for (const { name } of top) expect([name, index.includes(`from './${name}.js'`)]).toEqual([name, true]);
  });

  it('has no import that points up, or sideways between folders of one rank', () => {
    const broken: string[] = [];
    for (const file of files) {
      for (const target of importsOf(file)) {
        const why = violation(file, target);
        if (why !== undefined) broken.push(`${relative(SRC, file)} -> ${relative(SRC, target)}: ${why}`);
      }
    }
    expect(broken).toEqual([]);
  });

  it('has no import cycle, type-only imports included', () => {
    const imports = new Map(files.map((file) => [file, importsOf(file)]));
    const cycles: string[] = [];
    const done = new Set<string>();
    const visit = (file: string, path: string[]): void => {
      const at = path.indexOf(file);
      if (at >= 0) {
        cycles.push(
          path
            .slice(at)
            .map((step) => relative(SRC, step))
            .join(' -> '),
        );
        return;
      }
      if (done.has(file)) return;
      for (const target of imports.get(file) ?? []) visit(target, [...path, file]);
      done.add(file);
    };
    for (const file of files) visit(file, []);
    expect(cycles).toEqual([]);
  });

  it('talks to DynamoDB only from dynamodb/: no other module makes an SDK command', () => {
    const outside = files.filter((file) => placeOf(file).folder !== 'dynamodb');
    const sending = outside.flatMap((file) => commandsMadeIn(file).map((command) => `${relative(SRC, file)}: ${command}`));
    expect(sending).toEqual([]);
    const inside = files.filter((file) => placeOf(file).folder === 'dynamodb');
    expect(inside.flatMap(commandsMadeIn)).toEqual(
      expect.arrayContaining(['GetItemCommand', 'ScanCommand', 'QueryCommand', 'DeleteItemCommand']),
    );
  });

  it('sorts the failures of an acquisition in one module: no other acquisition module asks the SDK-error predicates', () => {
    const sdkErrors = join(SRC, 'dynamodb/sdk-errors.ts');
    const asking = files.filter((file) => placeOf(file).folder === 'acquire' && importsOf(file).includes(sdkErrors));
    // The listing's key-schema check is no acquisition: it reads the table's description when a listing is refused.
    expect(asking.map((file) => placeOf(file).name).sort()).toEqual(['failure-kind', 'listing-schema-check']);
  });

  it('catches an import that points up or sideways', () => {
    expect(violation(join(SRC, 'dynamodb/send-write.ts'), join(SRC, 'hold/held-lock.ts'))).toMatch(/may not take from hold/);
    expect(violation(join(SRC, 'heartbeat/lock-keeper.ts'), join(SRC, 'lock.ts'))).toMatch(/top of src/);
    expect(violation(join(SRC, 'hold/held-lock.ts'), join(SRC, 'heartbeat/lock-keeper.ts'))).toMatch(/may not take from heartbeat/);
    expect(violation(join(SRC, 'protocol/codec.ts'), join(SRC, 'primitives/bytes.ts'))).toMatch(/may not take from primitives/);
    expect(violation(join(SRC, 'base/errors.ts'), join(SRC, 'settings/options.ts'))).toMatch(/may not take from settings/);
    expect(violation(join(SRC, 'acquire/acquire-lock.ts'), join(SRC, 'election/leadership.ts'))).toMatch(/beside the client/);
    expect(violation(join(SRC, 'lock-client.ts'), join(SRC, 'acquire/acquire-lock.ts'))).toBeUndefined();
  });
});
