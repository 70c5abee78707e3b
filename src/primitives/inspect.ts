/**
 * What `console.log` and `util.inspect` show of handles whose fields are
 * private (`#held`), which Node would print as an empty `Lock {}`.
 */

/** Node's hook: a method under this key decides how `util.inspect` shows an object. */
export const inspectCustom: unique symbol = Symbol.for('nodejs.util.inspect.custom') as never;

/** The options Node passes to the hook; only these are used here. */
export interface InspectOptions {
  readonly depth?: number | null;
  readonly stylize?: (text: string, style: string) => string;
}

export type Inspect = (value: unknown, options: object) => string;

/** `Name { field: value, … }`, the way Node shows a class instance, or `[Name]` once past `depth`. */
export function inspectAs(name: string, fields: object, depth: number, options: InspectOptions, inspect: Inspect): string {
  if (depth < 0) return options.stylize?.(`[${name}]`, 'special') ?? `[${name}]`;
  const inner = { ...options, depth: options.depth === undefined || options.depth === null ? options.depth : options.depth - 1 };
  return `${name} ${inspect(fields, inner)}`;
}
