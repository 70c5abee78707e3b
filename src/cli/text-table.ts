/** Plain aligned columns for terminals: no borders, two spaces between columns. */

// eslint-disable-next-line @typescript-eslint/no-misused-spread -- code points, so a character outside the BMP counts once
const width = (text: string): number => [...text].length;

// Keys, owners and data come from the table: a control character in them must not move the cursor or fake a line.
// eslint-disable-next-line no-control-regex -- matching control characters is this pattern's job
const CONTROL = /[\u0000-\u001f\u007f-\u009f]/g;
const printable = (text: string): string => text.replace(CONTROL, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`);

export const hasControlCharacters = (text: string): boolean => printable(text) !== text;

export function renderTable(headers: readonly string[], cells: readonly (readonly string[])[]): string {
  const rows = cells.map((row) => row.map(printable));
  const widths = headers.map((header, column) => Math.max(width(header), ...rows.map((row) => width(row[column] ?? ''))));
  const line = (row: readonly string[]): string =>
    row
      .map((cell, column) => (column === row.length - 1 ? cell : cell + ' '.repeat((widths[column] ?? 0) - width(cell))))
      .join('  ')
      .trimEnd();
  return [line(headers), ...rows.map(line)].join('\n') + '\n';
}

/** `label  value` lines with the values aligned, for one record. */
export function renderFields(fields: readonly (readonly [label: string, value: string])[]): string {
  const labelWidth = Math.max(...fields.map(([label]) => width(label)));
  return fields.map(([label, value]) => `${label}${' '.repeat(labelWidth - width(label))}  ${printable(value)}`.trimEnd()).join('\n') + '\n';
}
