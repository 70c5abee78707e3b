/**
 * Checks of arguments whose type TypeScript states but JavaScript callers
 * may still get wrong: a signal that is not one, a callback that is not a
 * function. Each refuses with a typed error that names what came.
 */
import { InvalidArgumentError } from '../base/errors.js';

/** An optional `signal` option: an `AbortSignal` (by its shape: signals of another realm count), or absent. */
export function checkSignal(name: string, value: unknown): AbortSignal | undefined {
  if (value === undefined) return undefined;
  if (hasShape(value, { aborted: 'boolean', addEventListener: 'function' })) return value as AbortSignal;
  const hint = hasShape(value, { abort: 'function', signal: 'object' }) ? ' (pass its .signal)' : '';
  throw new InvalidArgumentError('INVALID_OPTION', `${name} must be an AbortSignal${hint}, got ${describeValue(value)}`);
}

/**
 * The options argument of the call `entry`: left out, or an object that
 * sets only options `entry` takes (`known`, every one of its option type's
 * names). An option of another call (`invocationDeadline` on
 * `acquireLocks`, say) or a misspelt one would otherwise be ignored, and
 * its caller would believe it in force. One set to `undefined` counts as
 * left out.
 */
export function checkOptionNames<Options extends object>(
  entry: string,
  given: Options | undefined,
  known: Readonly<Record<keyof Options, true>>,
): Options {
  const value: unknown = given;
  if (value === undefined) return {} as Options;
  if (typeof value !== 'object' || value === null) {
    throw new InvalidArgumentError('INVALID_OPTION', `${entry}: its options must be an object, got ${describeValue(value)}`);
  }
  const record = value as Record<string, unknown>;
  const unknown = Object.keys(record).filter((name) => record[name] !== undefined && !Object.hasOwn(known, name));
  if (unknown.length > 0) {
    const names = unknown.map((name) => JSON.stringify(name)).join(', ');
    throw new InvalidArgumentError('INVALID_OPTION', `${entry} takes no option ${names}; it takes ${Object.keys(known).join(', ')}`);
  }
  return value as Options;
}

/** A callback the caller must pass, such as a routine to run while holding a lock. */
export function checkFunction(name: string, value: unknown): void {
  if (typeof value !== 'function') throw new InvalidArgumentError('INVALID_OPTION', `${name} must be a function, got ${describeValue(value)}`);
}

function hasShape(value: unknown, shape: Record<string, 'boolean' | 'function' | 'object'>): boolean {
  if (typeof value !== 'object' || value === null) return false;
  const record = value as Record<string, unknown>;
  return Object.entries(shape).every(([key, type]) => typeof record[key] === type);
}

function describeValue(value: unknown): string {
  if (typeof value === 'string') return JSON.stringify(value);
  if (typeof value === 'function') return 'a function';
  if (typeof value !== 'object' || value === null) return String(value);
  const name = (Object.getPrototypeOf(value) as { constructor?: { name?: string } } | null)?.constructor?.name;
  return name === undefined ? 'an object' : `an object (${name})`;
}
