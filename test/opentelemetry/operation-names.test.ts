/** The `rpc.method` names; the minified case is integration/opentelemetry.test.ts's bundle. */
import { describe, expect, it } from '@jest/globals';
import * as sdk from '@aws-sdk/client-dynamodb';
import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { operationOf } from '../../src/opentelemetry/operation-names.js';

const SRC = resolve(dirname(fileURLToPath(import.meta.url)), '../../src');

function sourceFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) =>
    entry.isDirectory() ? sourceFiles(join(dir, entry.name)) : entry.name.endsWith('.ts') ? [join(dir, entry.name)] : [],
  );
}

/** Every `…Command` the sources import from the SDK. */
function commandsSent(): string[] {
  const names = new Set<string>();
  for (const file of sourceFiles(SRC)) {
    for (const [, list] of readFileSync(file, 'utf8').matchAll(/import\s*\{([^}]*)\}\s*from\s*'@aws-sdk\/client-dynamodb'/g)) {
      for (const name of list!.split(',').map((part) => part.trim())) if (/^\w+Command$/.test(name)) names.add(name);
    }
  }
  return [...names].sort();
}

/** A command class a minifier renamed. */
class xf {
  readonly input = {};
}

describe('operationOf', () => {
  it('knows every command the sources send by its class, not its class name', () => {
    const commands = commandsSent();
    expect(commands).toContain('PutItemCommand');
    for (const name of commands) {
      const Command = (sdk as unknown as Record<string, new (input: object) => object>)[name]!;
      expect([name, operationOf(new Command({}))]).toEqual([name, name.replace(/Command$/, '')]);
    }
  });

  it('names another command by its class while the name ends in Command, else _OTHER', () => {
    expect(operationOf(new sdk.BatchGetItemCommand({ RequestItems: {} }))).toBe('BatchGetItem');
    expect(operationOf(new xf())).toBe('_OTHER');
  });
});
