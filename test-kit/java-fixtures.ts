/**
 * Loads the recordings of the Java DynamoDB Lock Client
 * (`test/fixtures/java-lock-client/*.json`, format described in the README
 * next to them). Every `*.json` file in the directory is a scenario, so a new
 * recording is picked up without touching the tests.
 */
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { LockKey } from '../src/base/lock-key.js';
import type { LockTable } from '../src/protocol/index.js';
import type { WireAttributeValue, WireItem } from './dynamodb-json.js';

/** One stdout line of the LockPeer harness. Only the fields the tests read are typed. */
export interface JavaStepEvent {
  readonly event: string;
  readonly t_ms: number;
  readonly key?: string;
  readonly sort_key?: string | null;
  readonly owner?: string;
  readonly rvn?: string;
  readonly previous_rvn?: string;
  readonly lease_ms?: number;
  /** Lock data as UTF-8 text; `null` when the lock has none. */
  readonly data?: string | null;
  readonly released?: boolean;
  readonly delete?: boolean;
  readonly found?: boolean;
  readonly method?: string;
  readonly count?: number;
}

export interface JavaStep {
  readonly label: string;
  readonly phase: 'setup' | 'scenario';
  readonly argv: readonly string[];
  readonly exit_code: number;
  readonly events: readonly JavaStepEvent[];
}

export interface JavaRequest {
  readonly index: number;
  readonly t_ms: number;
  readonly label: string;
  readonly phase: string;
  readonly operation: string;
  /** The JSON body exactly as the Java SDK sent it. */
  readonly request: Readonly<Record<string, unknown>>;
  readonly response: { readonly status: number; readonly body: Readonly<Record<string, unknown>> };
}

export interface JavaScenario {
  /** The file name, e.g. `acquire-expired-lock.json`. */
  readonly file: string;
  readonly scenario: string;
  readonly summary: string;
  readonly table: { readonly name: string; readonly partitionKey: string; readonly sortKey: string | null };
  readonly sequence: readonly string[];
  readonly steps: readonly JavaStep[];
  readonly requests: readonly JavaRequest[];
  readonly final_items: readonly WireItem[];
}

function candidateDirectories(): string[] {
  const here = path.dirname(fileURLToPath(import.meta.url));
  // <repo>/test-kit → <repo>/test/fixtures/java-lock-client
  const candidates = [path.resolve(here, '../test/fixtures/java-lock-client')];
  const fromEnvironment = process.env['JAVA_LOCK_FIXTURES_DIR'];
  if (fromEnvironment) candidates.unshift(path.resolve(fromEnvironment));
  return candidates;
}

/** The fixture directory; throws (never skips) when it cannot be found. */
export function javaFixturesDirectory(): string {
  const candidates = candidateDirectories();
  const found = candidates.find((dir) => existsSync(dir) && statSync(dir).isDirectory());
  if (found === undefined) {
    throw new Error(
      `The Java lock client fixtures are missing; looked in:\n  ${candidates.join('\n  ')}\n` +
        'Set JAVA_LOCK_FIXTURES_DIR to the java-lock-client fixture directory.',
    );
  }
  return found;
}

let cache: JavaScenario[] | undefined;

/** Every scenario file, sorted by name. Throws when the directory is missing or holds none. */
export function loadJavaScenarios(): JavaScenario[] {
  if (cache !== undefined) return cache;
  const dir = javaFixturesDirectory();
  const files = readdirSync(dir)
    .filter((name) => name.endsWith('.json'))
    .sort();
  if (files.length === 0) throw new Error(`No scenario (*.json) in ${dir}`);
  cache = files.map((file) => {
    const parsed = JSON.parse(readFileSync(path.join(dir, file), 'utf8')) as Omit<JavaScenario, 'file'>;
    for (const field of ['scenario', 'table', 'sequence', 'steps', 'requests', 'final_items'] as const) {
      if (parsed[field] === undefined) throw new Error(`${file}: field ${JSON.stringify(field)} is missing`);
    }
    return { file, ...parsed };
  });
  return cache;
}

export function lockTableOf(scenario: JavaScenario): LockTable {
  return {
    tableName: scenario.table.name,
    partitionKeyName: scenario.table.partitionKey,
    sortKeyName: scenario.table.sortKey ?? undefined,
  };
}

/** The lock key held in a recorded `Key` or `Item` (wire JSON). */
export function lockKeyOf(scenario: JavaScenario, item: WireItem): LockKey {
  const stringAttribute = (name: string): string => {
    const value: WireAttributeValue | undefined = item[name];
    if (value?.S === undefined) throw new Error(`${scenario.file}: attribute ${name} is not a string in ${JSON.stringify(item)}`);
    return value.S;
  };
  const partitionKey = stringAttribute(scenario.table.partitionKey);
  return scenario.table.sortKey === null ? { partitionKey } : { partitionKey, sortKey: stringAttribute(scenario.table.sortKey) };
}

export function stepOf(scenario: JavaScenario, label: string): JavaStep {
  const step = scenario.steps.find((s) => s.label === label);
  if (step === undefined) throw new Error(`${scenario.file}: no step labelled ${JSON.stringify(label)}`);
  return step;
}

export const hasFlag = (step: JavaStep, flag: string): boolean => step.argv.includes(flag);

/** The value following `flag` on the step's command line, if the flag is there. */
export function flagValue(step: JavaStep, flag: string): string | undefined {
  const at = step.argv.indexOf(flag);
  return at === -1 ? undefined : step.argv[at + 1];
}

export function eventsOf(scenario: JavaScenario, kind: string): { step: JavaStep; event: JavaStepEvent }[] {
  return scenario.steps.flatMap((step) => step.events.filter((event) => event.event === kind).map((event) => ({ step, event })));
}
