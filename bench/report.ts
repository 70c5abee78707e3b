/** Prints benchmark rows as an aligned table, or with `--json` as one JSON object per line. */
export type Row = Record<string, string | number | null>;

export function printRows(rows: readonly Row[], json: boolean): void {
  if (json) {
    for (const row of rows) console.log(JSON.stringify(row));
    return;
  }
  const first = rows[0];
  if (first === undefined) return;
  const columns = Object.keys(first);
  const cell = (value: string | number | null | undefined): string =>
    value === null || value === undefined
      ? '-'
      : typeof value === 'number'
        ? Number.isInteger(value)
          ? String(value)
          : value.toFixed(2)
        : value;
  const widths = columns.map((c) => Math.max(c.length, ...rows.map((r) => cell(r[c]).length)));
  const line = (values: string[]) => values.map((v, i) => v.padStart(widths[i] ?? 0)).join('  ');
  console.log(line(columns));
  console.log(line(widths.map((w) => '-'.repeat(w))));
  for (const row of rows) console.log(line(columns.map((c) => cell(row[c]))));
}

export function percentile(sorted: readonly number[], p: number): number {
  if (sorted.length === 0) return NaN;
  const index = Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1);
  return sorted[Math.max(0, index)] as number;
}

/** The columns every acquire benchmark row has, in this order; what does not apply to a scenario is null. */
const ACQUIRE_COLUMNS = [
  'client',
  'scenario',
  'opsPerSecond',
  'p50Ms',
  'p99Ms',
  'callsPerCycle',
  'takeoverMs',
  'maxTakeoverMs',
  'leaseMs',
  'pollMs',
  'cycles',
  'workers',
  'keys',
  'spreadPct',
  'minMax',
  'randomMinMax',
  'longestRun',
  'handOverMs',
  'overlaps',
] as const;

export function acquireRow(values: Partial<Record<(typeof ACQUIRE_COLUMNS)[number], string | number | null>>): Row {
  const row: Row = {};
  for (const column of ACQUIRE_COLUMNS) row[column] = values[column] ?? null;
  return row;
}
